//! The fixed-reply answerer (`http-bench answer`), which shows what the
//! clients alone cost, and the testkit's replies it replays, learned over
//! HTTP.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_bench::era::Era;
use mcp_bench::proc::HttpServer;
use mcp_bench::wire::{self, Template, id_span};
use mcp_bench::{MESSAGE, runtime};

use crate::raw::{self, Raw, raw_connection, raw_post, raw_request};

/// The testkit's exact reply bodies (JSON) in one era, which the answerer
/// replays: to `initialize` (handshake era) or `server/discover` (stateless
/// era; `-` for the one the era lacks), to `tools/list` (our HTTP client
/// lists the tools once, for the `Mcp-Param-*` headers) and to one echo
/// call.
pub(crate) struct Replies {
    pub(crate) init: String,
    pub(crate) discover: String,
    pub(crate) list: String,
    pub(crate) call: String,
}

/// POSTs to a JSON-reply testkit of the era once to learn its replies.
pub(crate) fn learn_replies(testkit: &Path, era: Era) -> Result<Replies, String> {
    let mut args = vec!["--reply", "json"];
    args.extend(era.testkit_args());
    let server = HttpServer::start(testkit, &args)?;
    let url = server.url.clone();
    runtime().block_on(async {
        let raw = Raw::connect(&url, era).await?;
        let mut send = raw_connection(&raw.addr).await?;
        let text = |b: Bytes| String::from_utf8_lossy(&b).trim().to_owned();
        let (method, opening) = raw::opening(era);
        let request = raw_request(&raw.authority, &raw.path, era, None, method, opening);
        let first = raw_post(&mut send, request).await?.2;
        let list = wire::bare_request(2, "tools/list", era);
        let request =
            raw_request(&raw.authority, &raw.path, era, raw.session.as_deref(), "tools/list", list);
        let list = text(raw_post(&mut send, request).await?.2);
        let request = raw_request(
            &raw.authority,
            &raw.path,
            era,
            raw.session.as_deref(),
            "tools/call",
            wire::call_request(1, &era.raw_meta()),
        );
        let (status, _, call) = raw_post(&mut send, request).await?;
        let (first, call) = (text(first), text(call));
        if status != 200
            || !call.contains(MESSAGE)
            || !first.starts_with('{')
            || !list.contains("\"tools\"")
        {
            return Err(format!(
                "unexpected testkit replies {first:?} / {list:.200?} / {status} {call:?}"
            ));
        }
        // BENCH_ANSWERER_NO_LIST: the answerer refuses `tools/list` (400).
        let list =
            if std::env::var_os("BENCH_ANSWERER_NO_LIST").is_some() { "-".into() } else { list };
        Ok(match era {
            Era::Legacy => Replies { init: first, discover: "-".into(), list, call },
            Era::Modern => Replies { init: "-".into(), discover: first, list, call },
        })
    })
}

/// A reply of the answerer: `None` for `-` (a reply the era lacks).
fn template(reply: &str) -> Option<Template> {
    (reply != "-").then(|| Template::new(reply, b""))
}

/// `answer json|sse INIT DISCOVER LIST CALL`: an HTTP/1.1 server on one
/// current-thread runtime (TCP_NODELAY on every connection) that answers
/// each POST with a fixed reply, its `"id"` value replaced by the request's
/// (byte search, no JSON parsing): INIT for `initialize` (with an
/// `Mcp-Session-Id`), DISCOVER for `server/discover`, LIST for
/// `tools/list`, CALL for anything else; `-` for a reply the era lacks
/// (answered 400). A POST without an id
/// (a notification) gets 202; GET 405 (no standalone stream); DELETE 200.
/// Prints `listening on URL` first, as the testkit does.
pub(crate) fn answer(args: &[String]) -> Result<(), String> {
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper::{Method, Response, StatusCode};

    let sse = args.first().is_some_and(|a| a == "sse");
    let reply = |i: usize| template(args.get(i).map_or("-", String::as_str));
    let templates = Arc::new((reply(1), reply(2), reply(3), reply(4)));
    let rt = runtime();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("answer: bind: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!("listening on http://{addr}/mcp");
        std::io::Write::flush(&mut std::io::stdout()).map_err(|e| e.to_string())?;
        loop {
            let (stream, _) = listener.accept().await.map_err(|e| format!("answer: {e}"))?;
            let _ = stream.set_nodelay(true);
            let templates = templates.clone();
            let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let templates = templates.clone();
                async move {
                    let empty = |status: StatusCode| {
                        let mut response = Response::new(Full::new(Bytes::new()));
                        *response.status_mut() = status;
                        Ok::<_, hyper::Error>(response)
                    };
                    match *request.method() {
                        Method::POST => {}
                        Method::DELETE => return empty(StatusCode::OK),
                        _ => return empty(StatusCode::METHOD_NOT_ALLOWED),
                    }
                    let body = request.into_body().collect().await?.to_bytes();
                    let Some((a, b)) = id_span(&body) else {
                        return empty(StatusCode::ACCEPTED);
                    };
                    let method = wire::after_method(&body);
                    let (init, discover, list, call) = &*templates;
                    let (template, session) = if method.starts_with(b"initialize\"") {
                        (init.as_ref(), true)
                    } else if method.starts_with(b"server/discover\"") {
                        (discover.as_ref(), false)
                    } else if method.starts_with(b"tools/list\"") {
                        (list.as_ref(), false)
                    } else {
                        (call.as_ref(), false)
                    };
                    let Some(t) = template else {
                        return empty(StatusCode::BAD_REQUEST);
                    };
                    let mut out = Vec::with_capacity(t.head.len() + t.tail.len() + 32);
                    if sse {
                        out.extend_from_slice(b"event: message\ndata: ");
                    }
                    out.extend_from_slice(&t.head);
                    out.extend_from_slice(&body[a..b]);
                    out.extend_from_slice(&t.tail);
                    if sse {
                        out.extend_from_slice(b"\n\n");
                    }
                    let mut response = Response::new(Full::new(Bytes::from(out)));
                    let content_type = if sse { "text/event-stream" } else { "application/json" };
                    response.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static(content_type),
                    );
                    if session {
                        response
                            .headers_mut()
                            .insert("mcp-session-id", http::HeaderValue::from_static("bench"));
                    }
                    Ok(response)
                }
            });
            tokio::spawn(async move {
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    })
}
