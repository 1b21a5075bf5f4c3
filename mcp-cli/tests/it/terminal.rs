//! `mcpc` on a pseudo-terminal (its stdin and stderr), for questions a
//! person answers: what it shows, and answers typed in.

use std::io::{Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `mcpc` whose stdin and stderr are a pseudo-terminal.
pub(crate) struct Terminal {
    child: Child,
    master: std::fs::File,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    /// Starts `cmd` (stdout piped) on a new pseudo-terminal.
    pub(crate) fn start(mut cmd: Command) -> Terminal {
        let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
        let master = std::fs::File::from(pty.master);
        let child = cmd
            .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
            .stderr(Stdio::from(pty.slave))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let screen = Arc::new(Mutex::new(String::new()));
        let mut reader = master.try_clone().unwrap();
        let shown = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Terminal { child, master, screen }
    }

    /// Waits (at most 20 s) until `text` is on the screen.
    pub(crate) fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.screen.lock().unwrap().contains(text) {
            assert!(Instant::now() < deadline, "no {text:?} on the terminal: {:?}", self.screen());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types a line.
    pub(crate) fn type_line(&mut self, line: &str) {
        self.master.write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// What the terminal showed so far.
    pub(crate) fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Waits (at most 60 s) for the end: the exit code and stdout.
    pub(crate) fn finish(mut self) -> (i32, String) {
        let mut out = String::new();
        self.child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status.code().unwrap_or(-1), out);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("mcpc did not end: {:?}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
