//! Revocation at the issuer, and logout.

use super::OAuthClient;
use crate::discovery::{AuthorizationServerMetadata, fetch_authorization_server_metadata};
use crate::dpop::DpopKey;
use crate::error::Error;
use crate::fetch::{FormPost, form_post};
use crate::store::{StoreKey, StoredAuth};
use crate::token::{ClientRegistration, TokenSet, TokenType, client_auth, post_with_dpop};
use crate::url::resource_matches;

impl OAuthClient {
    /// Revokes the held (or stored) tokens at the authorization server's
    /// RFC 7009 revocation endpoint, the refresh token first, then the
    /// access token, with the client's authentication (and, for DPoP-bound
    /// tokens, a proof of their key); runs discovery first when none ran
    /// (no credentials sent). When the MCP server cannot say who its
    /// authorization server is (unreachable, or without usable metadata),
    /// the tokens stored for it are revoked at the issuer kept with them
    /// (its metadata read from there). `Ok(false)` when there is nothing to
    /// revoke, the server offers no revocation endpoint, or it cannot revoke
    /// one of the tokens (`unsupported_token_type`, as for self-contained
    /// JWT access tokens, which live until they expire: the others are
    /// revoked all the same); `Ok(true)` when every token was revoked. The tokens are kept: call
    /// [`logout`](Self::logout) after (whatever this returned).
    pub async fn revoke(&self) -> Result<bool, Error> {
        let _flow = self.flow.lock().await;
        let disc = match self.ensure_discovery(None, false).await {
            Ok(disc) => disc,
            Err(e) => {
                tracing::debug!(error = %e, "no discovery; revoking what is stored for the server");
                return self.revoke_stored(None).await?.ok_or(e);
            }
        };
        let key = self.key_of(&disc);
        self.load_stored(&key)?;
        let (client, tokens, dpop_key) = {
            let st = self.state();
            let client = self.config.pre_registered.clone().or_else(|| st.client.clone());
            (client, st.tokens.clone(), st.dpop_key.clone())
        };
        let Some(tokens) = tokens else {
            // None under the issuer found now (a server without metadata
            // gets a default one): those kept under the issuer they came from.
            return Ok(self.revoke_stored(Some(&key)).await?.unwrap_or(false));
        };
        let Some(client) = client else { return Ok(false) };
        self.revoke_at(&disc.metadata, &client, &tokens, dpop_key.as_deref()).await
    }

    /// The store's entries for this server and account whatever their
    /// issuer, found without asking it: those whose resource identifies
    /// the server URL.
    pub(super) fn stored_keys(&self) -> Result<Vec<StoreKey>, Error> {
        let mut keys: Vec<StoreKey> = self
            .store
            .keys()?
            .into_iter()
            .filter(|k| resource_matches(&k.resource, &self.config.server_url))
            .filter(|k| k.account == self.config.account)
            .collect();
        keys.sort_by(|a, b| (&a.resource, &a.issuer).cmp(&(&b.resource, &b.issuer)));
        Ok(keys)
    }

    /// Revokes the tokens stored for this server under any key but
    /// `except`, each at the issuer kept with it. `None` when none is
    /// stored.
    pub(super) async fn revoke_stored(
        &self,
        except: Option<&StoreKey>,
    ) -> Result<Option<bool>, Error> {
        let mut outcome = None;
        for key in self.stored_keys()? {
            if Some(&key) == except {
                continue;
            }
            let Some(stored) = self.store.load(&key)? else { continue };
            let Some(tokens) = stored.tokens else { continue };
            // The client the tokens were obtained with, at that issuer.
            let Some(client) = stored.client.or_else(|| self.config.pre_registered.clone()) else {
                continue;
            };
            let metadata = fetch_authorization_server_metadata(&*self.fetch, &key.issuer).await?;
            let revoked =
                self.revoke_at(&metadata, &client, &tokens, stored.dpop_key.as_ref()).await?;
            outcome = Some(outcome.unwrap_or(true) && revoked);
        }
        Ok(outcome)
    }

    /// Revokes `tokens` at `metadata`'s revocation endpoint.
    pub(super) async fn revoke_at(
        &self,
        metadata: &AuthorizationServerMetadata,
        client: &ClientRegistration,
        tokens: &TokenSet,
        dpop_key: Option<&DpopKey>,
    ) -> Result<bool, Error> {
        let Some(endpoint) = metadata.revocation_endpoint.as_deref() else {
            tracing::debug!("the authorization server offers no token revocation");
            return Ok(false);
        };
        let mut list = Vec::with_capacity(2);
        if let Some(rt) = &tokens.refresh_token {
            list.push((rt.secret(), "refresh_token"));
        }
        list.push((tokens.access_token.secret(), "access_token"));
        // DPoP-bound tokens are revoked with a proof of their key, as they
        // were obtained (and a nonce when the server asks for one).
        let dpop = match tokens.token_type {
            TokenType::Dpop => dpop_key.map(|key| self.dpop_call(key)),
            _ => None,
        };
        let mut every = true;
        for (token, hint) in list {
            let build = || {
                let mut params: Vec<(&'static str, String)> =
                    vec![("token", token.to_owned()), ("token_type_hint", hint.to_owned())];
                let basic = client_auth(
                    client,
                    self.config.signing_key.as_deref(),
                    &metadata.issuer,
                    self.now(),
                    &mut params,
                )?;
                form_post(FormPost { url: endpoint, params, basic })
            };
            // RFC 7009 §2.2: 200 also for a token that was already invalid.
            let names = ("revocation endpoint", "revocation");
            match post_with_dpop(&*self.fetch, names, endpoint, dpop.as_ref(), self.now(), build)
                .await
            {
                Ok(_) => tracing::debug!(hint, "token revoked"),
                // RFC 7009 §2.2.1: this kind of token cannot be revoked
                // there (a self-contained JWT access token lives until it
                // expires); the others still are.
                Err(Error::OAuth { error, .. }) if error == "unsupported_token_type" => {
                    tracing::debug!(hint, "the server cannot revoke this kind of token");
                    every = false;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(every)
    }

    /// Forgets the tokens of this server (memory and store), keeping the
    /// client registrations: those of the last discovery's issuer, and
    /// those stored for the server under any other issuer (so a logout
    /// needs no answer from the server).
    pub fn logout(&self) -> Result<(), Error> {
        let discovered = {
            let mut st = self.state();
            st.tokens = None;
            st.header = None;
            st.dpop_key = None;
            st.generation += 1;
            st.discovery.as_ref().map(|d| self.key_of(d))
        };
        let mut keys = self.stored_keys()?;
        if let Some(key) = discovered.filter(|k| !keys.contains(k)) {
            keys.push(key);
        }
        for key in keys {
            if let Some(stored) = self.store.load(&key)? {
                let value = StoredAuth { client: stored.client, tokens: None, dpop_key: None };
                self.store.save(&key, &value)?;
            }
        }
        Ok(())
    }

    // ----- the flow (called with the flow lock held) -----
}
