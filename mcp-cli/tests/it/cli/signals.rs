//! Signals: SIGINT, SIGTERM and SIGHUP during a call and while connecting
//! close the servers and give the conventional exit status.

#[cfg(target_os = "linux")]
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::run::Sandbox;

/// The processes whose parent is `pid`, from `/proc`.
#[cfg(target_os = "linux")]
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            // `pid (name) state ppid ...`: the name may hold spaces.
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|st| {
                st.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// Whether `pid` is gone (or a zombie), waiting up to 5 s.
#[cfg(unix)]
fn process_ends(pid: u32) -> bool {
    (0..100).any(|_| {
        let alive = Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
                st.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            });
        if alive {
            std::thread::sleep(Duration::from_millis(50));
        }
        !alive
    })
}

/// Sends `signal` to `child` and waits for it to end (at most 20 s);
/// returns its status and how long it took.
#[cfg(unix)]
fn signal_and_wait(
    child: &mut std::process::Child,
    signal: &str,
    when: &str,
) -> (std::process::ExitStatus, Duration) {
    let sent = Instant::now();
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, sent.elapsed());
        }
        if sent.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcpc did not stop after SIG{signal} {when}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGINT, SIGTERM and SIGHUP while a call waits on the server (the demo
/// server's `hang` tool): the conventional exit status, "interrupted" on
/// stderr, and the server `mcpc` spawned is gone.
#[cfg(target_os = "linux")]
#[test]
fn every_terminating_signal_during_a_call_closes_the_server_and_exits() {
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let s = Sandbox::new(&format!("sig-call-{signal}"));
        let mut child = s
            .command(&["call", "demo", "hang"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The demo server (`mcpc __demo-server`) is spawned; let the call
        // get under way.
        let demo_server = || {
            children_of(child.id()).into_iter().find(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.split(|&b| b == 0).any(|arg| arg == b"__demo-server"))
            })
        };
        let started = Instant::now();
        let mut server = demo_server();
        while server.is_none() && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
            server = demo_server();
        }
        let server = server.expect("the demo server was spawned");
        std::thread::sleep(Duration::from_millis(1500));
        let (status, _) = signal_and_wait(&mut child, signal, "during a call");
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert_eq!(status.code(), Some(code), "SIG{signal}: {stderr}");
        assert!(stderr.contains("interrupted"), "SIG{signal}: {stderr}");
        assert!(process_ends(server), "SIG{signal}: the server {server} is still running");
    }
}

/// Starts `mcpc` on a server that never answers (its pid written to a file
/// in the sandbox), sends `signal` while it is connecting, and returns the
/// exit code, the elapsed time and the server's pid.
#[cfg(unix)]
fn signal_while_connecting(s: &Sandbox, signal: &str) -> (Option<i32>, Duration, u32) {
    let pid_file = s.dir.join("server.pid");
    let script =
        s.write("server.sh", &format!("echo $$ > '{}'\nexec sleep 100\n", pid_file.display()));
    let server = format!("sh {}", script.display());
    let mut child = s
        .command(&["--server", &server, "tools"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The server is spawned and the handshake waits on it.
    let started = Instant::now();
    while !pid_file.exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let server_pid: u32 =
        std::fs::read_to_string(&pid_file).expect("the server started").trim().parse().unwrap();
    let (status, took) = signal_and_wait(&mut child, signal, "while connecting");
    (status.code(), took, server_pid)
}

#[cfg(unix)]
#[test]
fn every_terminating_signal_while_connecting_closes_the_server_and_exits() {
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let s = Sandbox::new(&format!("sig-connect-{signal}"));
        let (status, took, server) = signal_while_connecting(&s, signal);
        assert_eq!(status, Some(code), "SIG{signal}");
        // Promptly: not after the connect timeout.
        assert!(took < Duration::from_secs(10), "SIG{signal} took {took:?}");
        // The server it spawned is gone (its process group was killed).
        assert!(process_ends(server), "SIG{signal}: the server {server} is still running");
    }
}
