//! `mcp_client.token_store`: a value that is not a store kind, a keychain
//! that is not there (`keychain` fails saying so, `auto` falls back to the
//! token files with a warning), and (feature `keychain-tests`, run by
//! `cargo xtask keychain` on a private session bus with gnome-keyring
//! unlocked) `mcpc accounts migrate` both ways through a real keychain.

use crate::run::Sandbox;

/// A configuration with one OAuth server (never contacted) and the given
/// `[mcp_client]` lines.
fn config(client: &str) -> String {
    format!(
        "[mcp_client]\n{client}\n[[mcp_client.servers]]\nname = \"remote\"\n\
         endpoint = \"https://mcp.example/mcp\"\nauth = {{ kind = \"oauth\" }}\n"
    )
}

#[test]
fn an_unknown_token_store_names_the_file_and_the_key() {
    let sandbox = Sandbox::new("token-store-unknown");
    sandbox.write("servers.toml", &config("token_store = \"vault\""));
    let r = sandbox.run(&["--config", "servers.toml", "accounts"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("servers.toml"), "{r:?}");
    assert!(r.stderr.contains("mcp_client.token_store"), "{r:?}");
    assert!(r.stderr.contains("\"file\", \"keychain\" or \"auto\""), "{r:?}");
}

/// No session bus: no Secret Service. (Linux: elsewhere the platform's
/// keychain would answer.)
#[cfg(target_os = "linux")]
mod absent {
    use super::*;

    const NO_BUS: (&str, &str) =
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/mcpc-test-bus");

    #[test]
    fn keychain_fails_saying_there_is_none() {
        let sandbox = Sandbox::new("token-store-keychain-absent");
        sandbox.write("servers.toml", &config("token_store = \"keychain\""));
        let r = sandbox.run_env(&["--config", "servers.toml", "accounts"], &[NO_BUS]);
        assert_ne!(r.code, 0, "{r:?}");
        assert!(r.stderr.contains("no keychain is available"), "{r:?}");
    }

    #[test]
    fn auto_falls_back_to_the_files_with_a_warning_that_says_why() {
        let sandbox = Sandbox::new("token-store-auto-absent");
        sandbox.write("servers.toml", &config("token_store = \"auto\""));
        let r = sandbox.run_env(&["--config", "servers.toml", "accounts"], &[NO_BUS]);
        assert_eq!(r.code, 0, "{r:?}");
        let warning: Vec<_> =
            r.stderr.lines().filter(|l| l.contains("tokens are kept in files")).collect();
        assert_eq!(warning.len(), 1, "{r:?}");
        assert!(warning[0].contains("no keychain is available"), "{r:?}");
    }

    /// A configuration without OAuth servers never opens the keychain.
    #[test]
    fn no_oauth_server_no_keychain() {
        let sandbox = Sandbox::new("token-store-no-oauth");
        sandbox.write(
            "servers.toml",
            "[mcp_client]\ntoken_store = \"keychain\"\n[[mcp_client.servers]]\nname = \"s\"\ncommand = \"true\"\n",
        );
        let r = sandbox.run_env(&["--config", "servers.toml", "accounts"], &[NO_BUS]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(!r.stderr.contains("keychain"), "{r:?}");
    }
}

/// Against gnome-keyring (`cargo xtask keychain`).
#[cfg(feature = "keychain-tests")]
mod real {
    use super::*;
    use mcp_auth::{
        AccessToken, FileTokenStore, RefreshToken, StoreKey, StoredAuth, TokenSet, TokenStore,
    };

    #[test]
    fn accounts_migrate_to_the_keychain_and_back() {
        let sandbox = Sandbox::new("token-store-migrate");
        let service = format!("mcpc-test-{}", std::process::id());
        sandbox.write(
            "servers.toml",
            &config(&format!("token_store = \"keychain\"\nkeychain_service = \"{service}\"")),
        );
        let files = FileTokenStore::new(sandbox.dir.join("data").join("mcpc").join("oauth"));
        let key = StoreKey::new("https://mcp.example/mcp", "https://as.example")
            .with_account(Some("work".into()));
        let mut tokens = TokenSet::new(AccessToken::new("at-MCPC-secret"));
        tokens.refresh_token = Some(RefreshToken::new("rt-MCPC-secret"));
        let mut value = StoredAuth::default();
        value.tokens = Some(tokens);
        files.save(&key, &value).unwrap();

        let run = |args: &[&str]| {
            let mut all = vec!["--config", "servers.toml"];
            all.extend_from_slice(args);
            let r = sandbox.run(&all);
            assert!(!r.stdout.contains("MCPC-secret") && !r.stderr.contains("MCPC-secret"));
            r
        };
        let r = run(&["accounts", "migrate", "--to", "keychain"]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(
            r.stdout.contains("moved 1 account(s) from the token files to the keychain"),
            "{r:?}"
        );
        assert!(files.keys().unwrap().is_empty());
        // `token_store = "keychain"`: the listing reads the keychain.
        let r = run(&["accounts"]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.contains("remote") && r.stdout.contains("work"), "{r:?}");
        // Again: nothing left to move.
        let r = run(&["--output", "json", "accounts", "migrate", "--to", "keychain"]);
        let json = crate::run::json_of(&r);
        assert_eq!((json["moved"].as_u64(), json["already"].as_u64()), (Some(0), Some(0)));

        let r = run(&["--output", "json", "accounts", "migrate", "--to", "file"]);
        assert_eq!(crate::run::json_of(&r)["moved"], 1, "{r:?}");
        assert_eq!(files.load(&key).unwrap(), Some(value));
        let r = run(&["accounts"]);
        assert!(!r.stdout.contains("work"), "the keychain holds nothing now: {r:?}");
    }
}
