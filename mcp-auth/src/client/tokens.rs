//! Discovery, the stored tokens, and refresh.

use std::sync::Arc;

use mcp_sse::www_authenticate::BearerChallenge;

use super::{GrantKind, OAuthClient};
use crate::discovery::{Discovery, discover_at};
use crate::error::Error;
use crate::store::{StoreKey, StoredAuth};
use crate::token::{Grant, TokenSet, TokenType, exchange};
use crate::url::redact;

impl OAuthClient {
    /// The discovery to use: the one held, unless the challenge names
    /// another metadata URL or `again` asks for a fresh look (a refused
    /// token). When the issuer changed, nothing obtained from the old one
    /// is kept: not the tokens, not the client registration, in memory or
    /// in the store (SEP-2352); pre-registered credentials belong to one
    /// authorization server, so a change is an error for them.
    pub(super) async fn ensure_discovery(
        &self,
        challenge: Option<&BearerChallenge>,
        again: bool,
    ) -> Result<Discovery, Error> {
        let wanted = challenge.and_then(|c| c.resource_metadata.clone());
        if !again {
            let st = self.state();
            if let Some(d) = &st.discovery
                && (wanted.is_none() || wanted == st.prm_url)
            {
                return Ok(d.clone());
            }
        }
        let metadata_url = self.config.quirks.metadata_url.as_deref();
        let d = discover_at(&*self.fetch, &self.config.server_url, challenge, metadata_url).await?;
        tracing::debug!(issuer = %redact(&d.issuer), mode = ?d.mode, "discovered authorization server");
        let old = self.state().discovery.clone();
        let changed =
            old.as_ref().filter(|old| old.issuer != d.issuer || old.resource != d.resource);
        if let Some(old) = changed {
            if old.issuer != d.issuer && self.config.pre_registered.is_some() {
                return Err(Error::AuthorizationServerChanged {
                    from: redact(&old.issuer),
                    to: redact(&d.issuer),
                });
            }
            tracing::debug!(
                from = %redact(&old.issuer),
                to = %redact(&d.issuer),
                "the authorization server changed; forgetting what the previous one issued"
            );
            if old.issuer != d.issuer {
                self.store.remove(&self.key_of(old))?;
            }
        }
        let mut st = self.state();
        if old.is_none() || changed.is_some() {
            // Never send a token from another authorization server.
            st.tokens = None;
            st.client = None;
            st.dpop_key = None;
            *self.as_nonce.lock().unwrap_or_else(|p| p.into_inner()) = None;
            if st.header.take().is_some() {
                st.generation += 1;
            }
        }
        st.discovery = Some(d.clone());
        st.prm_url = wanted;
        Ok(d)
    }

    pub(super) fn load_stored(&self, key: &StoreKey) -> Result<(), Error> {
        let need = {
            let st = self.state();
            st.tokens.is_none() || st.client.is_none()
        };
        if !need {
            return Ok(());
        }
        if let Some(stored) = self.store.load(key)? {
            let mut st = self.state();
            if st.client.is_none() {
                st.client = stored.client;
            }
            if st.tokens.is_none()
                && let Some(t) = stored.tokens
            {
                if t.token_type == TokenType::Dpop && stored.dpop_key.is_none() {
                    // Bound to a key that is gone: useless.
                    return Ok(());
                }
                st.header = t.header_value().ok();
                st.tokens = Some(t);
                st.generation += 1;
                if let Some(k) = stored.dpop_key {
                    st.dpop_key = Some(Arc::new(k));
                }
            }
        }
        Ok(())
    }

    /// The store key of this discovery, for the configured account.
    pub(super) fn key_of(&self, d: &Discovery) -> StoreKey {
        StoreKey::new(d.resource.clone(), d.issuer.clone())
            .with_account(self.config.account.clone())
    }

    pub(super) fn save(&self, key: &StoreKey) -> Result<(), Error> {
        let value = {
            let st = self.state();
            StoredAuth {
                client: st.client.clone(),
                tokens: st.tokens.clone(),
                dpop_key: st.dpop_key.as_deref().cloned(),
            }
        };
        self.store.save(key, &value)
    }

    pub(super) fn set_tokens(&self, tokens: Option<TokenSet>) -> Result<(), Error> {
        let header = tokens.as_ref().map(TokenSet::header_value).transpose()?;
        let mut st = self.state();
        st.tokens = tokens;
        st.header = header;
        st.generation += 1;
        Ok(())
    }

    /// Refreshes (or re-runs client credentials). `Ok(false)` when there is
    /// nothing to refresh with.
    pub(super) async fn renew(&self) -> Result<bool, Error> {
        let (disc, client, tokens) = {
            let st = self.state();
            (st.discovery.clone(), st.client.clone(), st.tokens.clone())
        };
        let Some(disc) = disc else { return Ok(false) };
        let key = self.key_of(&disc);
        if self.config.grant != GrantKind::AuthorizationCode {
            let scopes = tokens.map(|t| t.scopes).unwrap_or_default();
            self.machine_grant(&disc, &scopes).await?;
            self.save(&key)?;
            return Ok(true);
        }
        let (Some(client), Some(tokens)) = (client, tokens) else { return Ok(false) };
        let Some(refresh) = tokens.refresh_token.clone() else { return Ok(false) };
        // A DPoP-bound refresh token is refreshed with the key it is bound to.
        let dpop = self.state().dpop_key.clone();
        let call = self.token_call(&disc, &client, &tokens.scopes, dpop.as_deref());
        match exchange(&*self.fetch, &call, &Grant::RefreshToken(&refresh)).await {
            Ok(new) => {
                tracing::debug!("refreshed access token");
                self.set_tokens(Some(new))?;
                self.save(&key)?;
                Ok(true)
            }
            Err(e) => {
                if e.is_invalid_grant() {
                    tracing::debug!("refresh token refused; dropping tokens");
                    self.set_tokens(None)?;
                    self.save(&key)?;
                }
                Err(e)
            }
        }
    }
}
