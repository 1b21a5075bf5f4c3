//! Obtaining tokens: the flow, client credentials and the other machine
//! grants, client registration, and the authorization code grant.

use mcp_sse::www_authenticate::BearerChallenge;

use super::{GrantKind, Mode, OAuthClient, Outcome};
use crate::discovery::Discovery;
use crate::error::Error;
use crate::handler::AuthorizationRequest;
use crate::pkce::{Pkce, constant_time_eq, random_b64, supports_s256};
use crate::registration::register;
use crate::scope::{initial_scopes, join};
use crate::store::StoreKey;
use crate::token::{ClientRegistration, Grant, exchange};
use crate::url::{append_query, is_loopback_host, iss_matches, parse_url, redact, require_secure};
use crate::xaa::request_id_jag;

impl OAuthClient {
    pub(super) async fn run(
        &self,
        challenge: Option<&BearerChallenge>,
        mode: Mode,
        allow_authorize: bool,
        rediscover: bool,
    ) -> Result<Outcome, Error> {
        let disc = self.ensure_discovery(challenge, rediscover).await?;
        let key = self.key_of(&disc);
        self.load_stored(&key)?;
        let now = self.now();
        let (valid, refreshable) = {
            let st = self.state();
            match &st.tokens {
                Some(t) => {
                    (!t.expires_within(now, self.config.refresh_skew), t.refresh_token.is_some())
                }
                None => (false, false),
            }
        };
        let try_refresh = match &mode {
            Mode::Reuse if valid => return Ok(Outcome::Reused),
            Mode::Reuse | Mode::Rejected => refreshable,
            Mode::Authorize | Mode::StepUp(_) => false,
        };
        // The machine grants are run again rather than refreshed (below).
        if try_refresh && self.config.grant == GrantKind::AuthorizationCode {
            match self.renew().await {
                Ok(true) => return Ok(Outcome::Refreshed),
                Ok(false) => {}
                // `invalid_grant`: tokens dropped; start over once, below.
                Err(e) if e.is_invalid_grant() => {}
                Err(e) => return Err(e),
            }
        }
        if !allow_authorize {
            return Err(Error::Unauthorized);
        }
        let scopes = match mode {
            Mode::StepUp(s) => s,
            _ => {
                let offline = self.config.offline_access && disc.metadata.offers_offline_access();
                let challenged = challenge.and_then(|c| c.scope.as_deref());
                let overridden = self.config.quirks.scopes_override.as_deref();
                initial_scopes(
                    overridden.or(challenged),
                    &self.config.scopes,
                    disc.protected_resource.as_ref().and_then(|p| p.scopes_supported.as_deref()),
                    offline,
                )
            }
        };
        match self.config.grant {
            GrantKind::ClientCredentials
            | GrantKind::CrossAppAccess
            | GrantKind::WorkloadIdentity => self.machine_grant(&disc, &scopes).await?,
            GrantKind::AuthorizationCode => self.authorization_code(&disc, &key, &scopes).await?,
        }
        self.save(&key)?;
        Ok(Outcome::Authorized)
    }

    /// Client credentials, cross-app access or workload identity: no user
    /// interaction. A refusal is returned as it is: the grant is not tried
    /// again, nor another one.
    pub(super) async fn machine_grant(
        &self,
        disc: &Discovery,
        scopes: &[String],
    ) -> Result<(), Error> {
        let client = self
            .config
            .pre_registered
            .clone()
            .ok_or(Error::InvalidCredentials("this grant needs a pre-registered client"))?;
        // The JWT bearer grants' assertion: an ID-JAG from the identity
        // provider, or the workload's own.
        let assertion = match self.config.grant {
            GrantKind::CrossAppAccess => {
                let idp = self.config.identity_provider.as_ref().ok_or(
                    Error::InvalidCredentials("cross-app access needs an identity provider"),
                )?;
                Some(request_id_jag(&*self.fetch, idp, disc, scopes).await?)
            }
            GrantKind::WorkloadIdentity => {
                let source = self.config.assertion.as_ref().ok_or(Error::InvalidCredentials(
                    "workload identity needs an assertion source",
                ))?;
                Some(source.current().await?)
            }
            _ => None,
        };
        let dpop = self.dpop_key(disc)?;
        let call = self.token_call(disc, &client, scopes, dpop.as_deref());
        let grant = match &assertion {
            Some(a) => Grant::JwtBearer(a),
            None => Grant::ClientCredentials,
        };
        let tokens = exchange(&*self.fetch, &call, &grant).await?;
        tracing::debug!(
            grant = ?self.config.grant,
            method = client.auth_method.as_str(),
            "obtained token without user interaction"
        );
        self.state().client = Some(client);
        self.set_tokens(Some(tokens))
    }

    pub(super) async fn ensure_client(
        &self,
        disc: &Discovery,
        key: &StoreKey,
        redirect_uri: &str,
        scopes: &[String],
    ) -> Result<ClientRegistration, Error> {
        if let Some(pre) = &self.config.pre_registered {
            return Ok(pre.clone());
        }
        if let Some(c) = self.state().client.clone() {
            return Ok(c);
        }
        let client = if let (true, Some(url)) = (
            disc.metadata.client_id_metadata_document_supported,
            self.config.client_metadata.metadata_url.as_deref(),
        ) {
            tracing::debug!("using the client id metadata document URL as client_id");
            ClientRegistration::public(url)
        } else if disc.metadata.registration_endpoint.is_some() {
            register(
                &*self.fetch,
                &disc.metadata,
                &self.config.client_metadata,
                &[redirect_uri.to_owned()],
                scopes,
            )
            .await?
        } else {
            return Err(Error::NoRegistrationMethod);
        };
        self.state().client = Some(client.clone());
        self.save(key)?;
        Ok(client)
    }

    pub(super) async fn authorization_code(
        &self,
        disc: &Discovery,
        key: &StoreKey,
        scopes: &[String],
    ) -> Result<(), Error> {
        if !supports_s256(disc.metadata.code_challenge_methods_supported.as_deref()) {
            return Err(Error::PkceNotSupported);
        }
        let handler = self
            .handler
            .clone()
            .ok_or_else(|| Error::Handler("no authorization handler configured".into()))?;
        let redirect_uri = handler.redirect_uri();
        check_redirect_uri(&redirect_uri)?;
        let endpoint = disc.metadata.authorization_endpoint()?;
        require_secure("authorization endpoint", endpoint)?;
        let client = self.ensure_client(disc, key, &redirect_uri, scopes).await?;

        let pkce = Pkce::generate()?;
        let state = random_b64(24)?;
        let scope = join(scopes);
        let mut params: Vec<(&str, &str)> = vec![
            ("response_type", "code"),
            ("client_id", &client.client_id),
            ("redirect_uri", &redirect_uri),
            ("code_challenge", pkce.challenge()),
            ("code_challenge_method", pkce.method()),
            ("state", &state),
        ];
        if let Some(resource) = self.config.quirks.resource.resolve(&disc.resource) {
            params.push(("resource", resource));
        }
        if let Some(s) = &scope {
            params.push(("scope", s));
        }
        for (name, value) in &self.config.quirks.authorization_params {
            params.push((name, value));
        }
        let request = AuthorizationRequest {
            url: append_query(endpoint, params),
            redirect_uri: redirect_uri.clone(),
        };
        tracing::debug!(endpoint = %redact(endpoint), "sending the user to the authorization endpoint");
        let callback = handler.authorize(&request).await?;

        match &callback.state {
            Some(s) if constant_time_eq(s, &state) => {}
            _ => return Err(Error::StateMismatch),
        }
        match &callback.iss {
            Some(iss) if !iss_matches(iss, &disc.metadata.issuer) => {
                return Err(Error::IssMismatch);
            }
            None if disc.metadata.authorization_response_iss_parameter_supported => {
                return Err(Error::IssMismatch);
            }
            _ => {}
        }
        if let Some(error) = callback.error {
            return Err(Error::OAuth {
                endpoint: "authorization",
                error,
                description: callback.error_description.map(|d| d.chars().take(300).collect()),
            });
        }
        let code = callback.code.filter(|c| !c.is_empty()).ok_or(Error::MissingCode)?;
        let dpop = self.dpop_key(disc)?;
        let call = self.token_call(disc, &client, scopes, dpop.as_deref());
        let grant = Grant::AuthorizationCode {
            code: &code,
            redirect_uri: &redirect_uri,
            code_verifier: pkce.verifier(),
        };
        let tokens = exchange(&*self.fetch, &call, &grant).await?;
        tracing::debug!(scopes = %tokens.scopes.join(" "), "obtained token with authorization code");
        self.set_tokens(Some(tokens))
    }
}

/// A redirect URI must be `https`, or `http` on a loopback host.
fn check_redirect_uri(uri: &str) -> Result<(), Error> {
    let u = parse_url("redirect", uri)?;
    let https = u.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("https"));
    if https || u.host().is_some_and(is_loopback_host) {
        Ok(())
    } else {
        Err(Error::InsecureUrl { what: "redirect", endpoint: redact(uri) })
    }
}
