//! The TLS configuration of a pool: the caller's, or rustls with the
//! `ring` provider and the roots the options name.

use std::sync::{Arc, OnceLock};

use crate::options::{HttpOptions, Roots};

/// The TLS configuration a pool's connector uses, ALPN set (HTTP/1.1, and
/// h2 with `http2`): the caller's, or rustls with the `ring` provider, the
/// roots of [`HttpOptions::roots`] and the certificates of
/// [`HttpOptions::ca_file`].
///
/// Without a caller's configuration or a CA file, one configuration per
/// [`Roots`] is made per process and shared by every client (and its TLS
/// session cache with it, as a shared `reqwest::Client` shares its own): a
/// new client builds no rustls configuration, and a second client to an
/// origin resumes the first one's TLS session.
pub(crate) fn tls_config(options: &HttpOptions) -> Result<Arc<rustls::ClientConfig>, String> {
    if let Some(config) = &options.tls {
        if options.ca_file.is_some() {
            return Err("`ca_file` and `tls` cannot be used together: add the roots to the given TLS configuration".into());
        }
        // ALPN is the client's to set (HTTP/1.1, and h2 with `http2`):
        // the protocols the given configuration lists are replaced.
        let mut config = rustls::ClientConfig::clone(config);
        set_alpn(&mut config);
        return Ok(Arc::new(config));
    }
    if options.ca_file.is_none() {
        return default_config(options.roots);
    }
    let mut roots = match options.roots {
        Roots::Mozilla => mozilla_roots(),
        _ => platform_roots(),
    };
    if let Some(path) = &options.ca_file {
        let added = extra_roots(Arc::make_mut(&mut roots), path)?;
        tracing::debug!(added, "extra CA roots loaded");
    }
    build_config(roots).map(Arc::new)
}

/// Whether [`tls_config`] gives the process's configuration for `roots`
/// (no caller's configuration, no CA file), which
/// [`default_config`] makes at its first use.
pub(crate) fn uses_default(options: &HttpOptions) -> bool {
    options.tls.is_none() && options.ca_file.is_none()
}

/// The process's TLS configuration for `roots`, made at the first call
/// (loading the platform's store takes milliseconds) and shared after.
pub(crate) fn default_config(roots: Roots) -> Result<Arc<rustls::ClientConfig>, String> {
    static MOZILLA: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    static PLATFORM: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    let (cell, roots): (_, fn() -> Arc<rustls::RootCertStore>) = match roots {
        Roots::Mozilla => (&MOZILLA, mozilla_roots),
        _ => (&PLATFORM, platform_roots),
    };
    cell.get_or_init(|| build_config(roots()).map(Arc::new)).clone()
}

/// The ALPN protocols offered: h2 and http/1.1 with the `http2` feature,
/// none otherwise (HTTP/1.1 is then all a server may pick).
fn set_alpn(config: &mut rustls::ClientConfig) {
    #[cfg(feature = "http2")]
    {
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    }
    #[cfg(not(feature = "http2"))]
    config.alpn_protocols.clear();
}

/// rustls with the `ring` provider, safe default versions, `roots`, no
/// client certificate, [`TLS_SESSIONS`] remembered, ALPN set.
fn build_config(roots: Arc<rustls::RootCertStore>) -> Result<rustls::ClientConfig, String> {
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())
        .map(|b| {
            let mut config = b.with_root_certificates(roots).with_no_client_auth();
            config.resumption = rustls::client::Resumption::in_memory_sessions(TLS_SESSIONS);
            set_alpn(&mut config);
            config
        })
}

/// The TLS sessions a configuration made here keeps for resumption: 16
/// servers' worth (8 TLS 1.3 tickets each). The default configuration is
/// shared by every client of the process (each talks TLS to its endpoint's
/// origin, maybe an `https://` proxy and, for OAuth, an authorization
/// server or two), so the table is paid for once, not per client;
/// rustls's default (32 servers) would size it at about 15 KiB up front.
const TLS_SESSIONS: usize = 16 * 8;

/// The Mozilla roots of `webpki-roots`, made once per process (a client
/// shares them: nothing is copied per client).
fn mozilla_roots() -> Arc<rustls::RootCertStore> {
    static ROOTS: OnceLock<Arc<rustls::RootCertStore>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            Arc::new(rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() })
        })
        .clone()
}

/// The operating system's trust anchors, loaded once per process and
/// shared by every client; the Mozilla roots when it has none that rustls
/// can use.
fn platform_roots() -> Arc<rustls::RootCertStore> {
    static ROOTS: OnceLock<Arc<rustls::RootCertStore>> = OnceLock::new();
    let roots = ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::debug!(%error, "reading the platform's certificate store");
        }
        let mut roots = rustls::RootCertStore::empty();
        let (added, unusable) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            tracing::warn!(
                errors = found.errors.len(),
                unusable,
                "the platform's certificate store has no usable CA certificate; trusting the Mozilla roots instead"
            );
            return mozilla_roots();
        }
        tracing::debug!(added, unusable, "the platform's CA certificates loaded");
        Arc::new(roots)
    });
    roots.clone()
}

/// Adds the certificates of a PEM file to `roots`; returns how many. A
/// file that cannot be read, holds no certificate or a certificate rustls
/// cannot use as a root is an error.
fn extra_roots(roots: &mut rustls::RootCertStore, path: &std::path::Path) -> Result<usize, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let what = || format!("the CA file {}", path.display());
    let mut added = 0;
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| format!("{}: {e}", what()))? {
        let cert = cert.map_err(|e| format!("{}: {e}", what()))?;
        roots.add(cert).map_err(|e| format!("{}: {e}", what()))?;
        added += 1;
    }
    if added == 0 {
        return Err(format!("{} holds no PEM certificate", what()));
    }
    Ok(added)
}
