//! Consent for project configurations: loading, approving, a change that
//! asks again, and record files that cannot be used.

use std::path::{Path, PathBuf};

use mcp_host_registry::{
    ConfigOrigin, Consent, ConsentStore, FileConsentStore, LoadOptions, MemoryConsentStore, Review,
    TrustError,
};

fn scratch(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mcp-registry-consent-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn project(dir: &Path, args: &str) -> PathBuf {
    let file = dir.join("mcp.toml");
    let text = format!(
        "[mcp_client]\n[[mcp_client.servers]]\nname = \"s\"\ncommand = \"touch\"\nargs = [{args}]\n"
    );
    std::fs::write(&file, text).unwrap();
    file
}

fn review(file: &Path, origin: ConfigOrigin, store: &dyn ConsentStore) -> Review {
    Review::load(file, origin, &LoadOptions::default(), store).unwrap()
}

#[test]
fn a_project_file_runs_only_once_approved_and_asks_again_when_it_changes() {
    let dir = scratch("flow");
    let store = FileConsentStore::new(dir.join("state").join("trusted.json"));
    let file = project(&dir, "\"marker\"");

    let r = review(&file, ConfigOrigin::Project, &store);
    assert_eq!(r.consent(), &Consent::Pending);
    assert!(r.file().is_absolute());
    assert_eq!(r.config().servers.len(), 1);
    match r.into_loaded() {
        Err(TrustError::ConsentRequired { file: f, changed: false }) => {
            assert_eq!(f, std::path::absolute(&file).unwrap());
        }
        other => panic!("{other:?}"),
    }
    // Nothing recorded by asking.
    assert!(!store.path().exists());

    let r = review(&file, ConfigOrigin::Project, &store);
    let digest = r.digest().to_owned();
    r.approve(&store).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(store.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let r = review(&file, ConfigOrigin::Project, &store);
    assert_eq!((r.consent(), r.digest()), (&Consent::Approved, digest.as_str()));
    assert!(r.into_loaded().is_ok());

    // Another argument: asked again.
    project(&dir, "\"marker\", \"/etc/evil\"");
    let r = review(&file, ConfigOrigin::Project, &store);
    assert_eq!(r.consent(), &Consent::Changed);
    let e = r.into_loaded().unwrap_err();
    assert!(matches!(e, TrustError::ConsentRequired { changed: true, .. }), "{e:?}");
    assert!(e.to_string().contains("changed what it runs"), "{e}");

    // Approved again; then a looser call policy or a moved audit log is a
    // change too.
    review(&file, ConfigOrigin::Project, &store).approve(&store).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let loosened =
        text.replace("[mcp_client]\n", "[mcp_client]\n[mcp_client.approval]\nallow = [\"*\"]\n");
    std::fs::write(&file, &loosened).unwrap();
    assert_eq!(review(&file, ConfigOrigin::Project, &store).consent(), &Consent::Changed);
    review(&file, ConfigOrigin::Project, &store).approve(&store).unwrap();
    let moved = loosened.replace(
        "[[mcp_client.servers]]",
        "[mcp_client.audit]\npath = \"/dev/null\"\n[[mcp_client.servers]]",
    );
    std::fs::write(&file, moved).unwrap();
    assert_eq!(review(&file, ConfigOrigin::Project, &store).consent(), &Consent::Changed);

    // The user's own and explicit files need nothing.
    for origin in [ConfigOrigin::User, ConfigOrigin::Explicit] {
        let r = review(&file, origin, &MemoryConsentStore::new());
        assert_eq!(r.consent(), &Consent::Approved);
    }
    assert!(store.revoke(&std::path::absolute(&file).unwrap()).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_record_file_that_cannot_be_used_is_an_error_naming_it_and_changes_nothing() {
    let dir = scratch("bad");
    let file = project(&dir, "\"x\"");
    let records = dir.join("trusted.json");
    for text in ["{not json", "{\"version\": 9, \"approved\": {}}", "[1]"] {
        std::fs::write(&records, text).unwrap();
        let store = FileConsentStore::new(&records);
        let e = Review::load(&file, ConfigOrigin::Project, &LoadOptions::default(), &store)
            .unwrap_err();
        assert!(matches!(e, TrustError::Corrupt { .. }), "{text}: {e:?}");
        assert!(e.to_string().contains(&records.display().to_string()), "{e}");
        assert!(!e.to_string().contains("not json"), "quotes the file: {e}");
        let e = store.approve(&file, "d").unwrap_err();
        assert!(matches!(e, TrustError::Corrupt { .. }), "{e:?}");
        assert_eq!(std::fs::read_to_string(&records).unwrap(), text, "the file was rewritten");
    }
    // A configuration that does not load is the configuration's error.
    std::fs::write(&file, "[mcp_client\n").unwrap();
    let e = Review::load(
        &file,
        ConfigOrigin::Project,
        &LoadOptions::default(),
        &MemoryConsentStore::new(),
    )
    .unwrap_err();
    assert!(matches!(e, TrustError::Config(_)), "{e:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
