//! The requests that keep the clock to the control plane's (`time/keeping.rs` decides when and what
//! their answers say): `GET /version` probes, whose `Date` headers the client's layer reads, and a
//! watch of the controller manager's Lease.

use std::future::Future;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};

use super::client::Connection;
use super::watch::from_watch_cache;
use crate::decode::CONTROLLER_LEASE;
use crate::engine::time::Timestamp;
use crate::time::Timekeeper;
use crate::time::keeping::{ControlPlane, Renewal};

impl ControlPlane for Connection {
    fn timekeeper(&self) -> &Timekeeper {
        &self.time
    }

    /// One `GET /version`: its answer's `Date` header is read by the client's layer.
    fn probe(&self) -> impl Future<Output = ()> + Send {
        let client = self.client.clone();
        async move {
            let Ok(request) = http::Request::get("/version").body(Vec::new()) else { return };
            let answer = client.request_text(request);
            let _ = tokio::time::timeout(Duration::from_secs(5), answer).await;
        }
    }

    fn controller_renewals(&self) -> impl Stream<Item = Renewal> + Send + 'static {
        let (namespace, name) = CONTROLLER_LEASE;
        let api = Api::<Lease>::namespaced(self.client.clone(), namespace);
        let config = from_watch_cache().fields(&format!("metadata.name={name}"));
        watcher::watcher(api, config)
            .default_backoff()
            // Not allowed to watch it: the end.
            .take_while(|event| std::future::ready(!matches!(event, Err(error) if denied(error))))
            .filter_map(|event| {
                std::future::ready(match event {
                    Ok(Event::Apply(lease)) => renewed(&lease).map(Renewal::Watched),
                    Ok(Event::InitApply(lease)) => renewed(&lease).map(Renewal::Listed),
                    Ok(_) | Err(_) => None,
                })
            })
    }
}

/// When `lease` was last renewed, if it says.
fn renewed(lease: &Lease) -> Option<Timestamp> {
    let stamp = lease.spec.as_ref()?.renew_time.as_ref()?;
    Some(Timestamp::from_nanos(stamp.0.as_nanosecond()))
}

fn denied(error: &watcher::Error) -> bool {
    let (watcher::Error::InitialListFailed(kube::Error::Api(status))
    | watcher::Error::WatchStartFailed(kube::Error::Api(status))
    | watcher::Error::WatchFailed(kube::Error::Api(status))) = error
    else {
        return false;
    };
    matches!(status.code, 401 | 403)
}
