//! DPoP (RFC 9449): proofs for the MCP server, the key of a server and
//! issuer, and the token request that carries it.

use std::sync::Arc;

use http::HeaderValue;

use super::{OAuthClient, RequestAuth};
use crate::discovery::Discovery;
use crate::dpop::{DpopKey, DpopMode, alg_allowed};
use crate::error::Error;
use crate::token::{ClientRegistration, DpopCall, TokenCall};

impl OAuthClient {
    /// The `DPoP` header for one request to the MCP server carrying `req`'s
    /// token (`None` for a Bearer token): a fresh proof for `method` and
    /// `url`, bound to the token, with the server's nonce when it gave one.
    pub fn dpop_proof(
        &self,
        req: &RequestAuth,
        method: &str,
        url: &str,
    ) -> Result<Option<HeaderValue>, Error> {
        let Some(ath) = &req.ath else { return Ok(None) };
        let (key, nonce) = {
            let st = self.state();
            (st.dpop_key.clone(), st.resource_nonce.clone())
        };
        let key = key.ok_or(Error::InvalidCredentials("a DPoP-bound token without its key"))?;
        let proof = key.proof_with_ath(method, url, Some(ath), nonce.as_deref(), self.now())?;
        let mut v = HeaderValue::try_from(proof)
            .map_err(|_| Error::InvalidCredentials("a DPoP proof does not fit a header"))?;
        v.set_sensitive(true);
        Ok(Some(v))
    }

    pub(super) fn dpop_call<'a>(&'a self, key: &'a DpopKey) -> DpopCall<'a> {
        DpopCall { key, nonce: &self.as_nonce }
    }

    /// A token request to `disc`'s authorization server as `client`, for
    /// `scopes`, signed and `resource`-scoped as configured, DPoP-bound to
    /// `dpop` when given.
    pub(super) fn token_call<'a>(
        &'a self,
        disc: &'a Discovery,
        client: &'a ClientRegistration,
        scopes: &'a [String],
        dpop: Option<&'a DpopKey>,
    ) -> TokenCall<'a> {
        TokenCall {
            metadata: &disc.metadata,
            client,
            signer: self.config.signing_key.as_deref(),
            resource: self.config.quirks.resource.resolve(&disc.resource),
            scopes,
            now: self.now(),
            dpop: dpop.map(|key| self.dpop_call(key)),
        }
    }

    /// The DPoP key for a token request to `disc`'s authorization server:
    /// the one held (its tokens are bound to it), else a new one when DPoP
    /// is to be used ([`OAuthConfig::dpop`]), else none.
    pub(super) fn dpop_key(&self, disc: &Discovery) -> Result<Option<Arc<DpopKey>>, Error> {
        let mut st = self.state();
        if let Some(k) = &st.dpop_key {
            return Ok(Some(k.clone()));
        }
        let required = st.dpop_required
            || disc
                .protected_resource
                .as_ref()
                .is_some_and(|p| p.dpop_bound_access_tokens_required);
        let allowed = alg_allowed(disc.metadata.dpop_signing_alg_values_supported.as_deref());
        let wanted = match self.config.dpop {
            DpopMode::Never => false,
            DpopMode::Always => allowed,
            DpopMode::WhenRequired if required && !allowed => {
                return Err(Error::document(
                    "authorization server metadata",
                    &disc.metadata.issuer,
                    "the MCP server requires DPoP but dpop_signing_alg_values_supported does not list ES256",
                ));
            }
            DpopMode::WhenRequired => required,
        };
        if !wanted {
            return Ok(None);
        }
        let key = Arc::new(DpopKey::generate()?);
        tracing::debug!(jkt = %key.thumbprint(), "DPoP key created");
        st.dpop_key = Some(key.clone());
        Ok(Some(key))
    }
}
