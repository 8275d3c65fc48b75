//! The requests every read of a snapshot is made of: a GET or a LIST (every page) of what the
//! decoder reads, from where [`ReadFrom`] says, and a LIST of other kinds as JSON.

use kube::api::{GetParams, ListParams};
use kube::core::Request;

use crate::cluster::client::{Connection, PAGE_SIZE, ReadFrom};
use crate::cluster::error::ClusterError;
use crate::decode::{DumpError, Page, read_object, read_page};
use crate::engine::snapshot::Snapshot;

impl Connection {
    /// GETs one object and reads its answer a second way too (`also`); `Ok(None)` on 404.
    pub(super) async fn get_read<T>(
        &self,
        path: &str,
        name: &str,
        kind: &str,
        resource: &str,
        also: impl FnOnce(&[u8]) -> Result<T, DumpError>,
    ) -> Result<Option<(Snapshot, T)>, ClusterError> {
        let params = match self.read {
            ReadFrom::Cache => GetParams::any(),
            ReadFrom::Quorum => GetParams::default(),
        };
        // An empty name, or one a URL path cannot hold, fails here: kube checks the first, `http` the
        // second (a namespace from the kubeconfig, a node name from the server).
        let request = Request::new(path)
            .get(name, &params)
            .map_err(|_| ClusterError::InvalidName { kind: kind.to_owned(), name: name.to_owned() })?;
        match self.send(request, "get", resource).await {
            Ok(body) => {
                let read = read_object(body.as_bytes(), kind).and_then(|object| Ok((object, also(body.as_bytes())?)));
                read.map(Some).map_err(|e| self.decode("get", resource, &body, &e))
            }
            Err(ClusterError::ApiFailed { code: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// LISTs every page.
    pub(super) async fn list(
        &self,
        path: &str,
        params: ListParams,
        kind: &str,
        resource: &str,
    ) -> Result<Snapshot, ClusterError> {
        self.list_read(path, params, kind, resource, |_| Ok(())).await
    }

    /// `params` read from where [`ReadFrom`] says: the watch cache (`resourceVersion=0`, in one
    /// answer), or etcd in pages of [`PAGE_SIZE`].
    pub(super) fn list_params(&self, params: ListParams) -> ListParams {
        // The watch cache serves a read at resourceVersion=0 only without a limit (kube leaves the
        // version out of a limited one, as client-go does, since servers before 1.31 ignore the limit).
        match self.read {
            ReadFrom::Cache => params.match_any(),
            ReadFrom::Quorum => params.limit(PAGE_SIZE),
        }
    }

    /// LISTs every page, and reads each a second way too (`also`).
    pub(super) async fn list_read(
        &self,
        path: &str,
        params: ListParams,
        kind: &str,
        resource: &str,
        mut also: impl FnMut(&[u8]) -> Result<(), DumpError>,
    ) -> Result<Snapshot, ClusterError> {
        let mut snapshot = Snapshot::default();
        let mut params = self.list_params(params);
        loop {
            // kube only rejects a version match without a resourceVersion or an Exact match at "0"
            // (these parameters set none or NotOlderThan at "0"); `http` rejects a URL past 64 KiB,
            // which a label selector can make.
            let request =
                Request::new(path).list(&params).map_err(|e| ClusterError::unsendable("list", resource, &e))?;
            let body = self.send(request, "list", resource).await?;
            let Page { snapshot: page, continue_token } = read_page(body.as_bytes(), kind)
                .and_then(|page| also(body.as_bytes()).map(|()| page))
                .map_err(|e| self.decode("list", resource, &body, &e))?;
            snapshot.merge(page);
            match continue_token {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(snapshot),
            }
        }
    }

    /// The error for an answer that did not read: not an API server's when it is not a JSON object
    /// (a web server's page), else a field of the wrong shape.
    fn decode(&self, verb: &'static str, resource: &str, body: &str, error: &DumpError) -> ClusterError {
        if !body.trim_start().starts_with('{') {
            return ClusterError::NotAnApiServer {
                server: self.server.clone(),
                verb,
                resource: resource.to_owned(),
                what: "an answer that is not JSON".into(),
            };
        }
        ClusterError::Decode { server: self.server.clone(), resource: resource.to_owned(), reason: error.to_string() }
    }
}

/// Every page of the LIST at `path` (from where `params` say), as JSON (the objects of kinds the
/// protobuf rewrite does not read: their templates, their owners), keeping the items `keep` keeps;
/// what was read before a failure otherwise.
pub(super) async fn list_json(
    connection: &Connection,
    path: &str,
    mut params: ListParams,
    resource: &str,
    keep: impl Fn(&serde_json::Value) -> bool,
) -> Vec<serde_json::Value> {
    let mut kept = Vec::new();
    loop {
        let Ok(mut request) = Request::new(path).list(&params) else { return kept };
        let json = http::HeaderValue::from_static(crate::cluster::protobuf::JSON);
        request.headers_mut().insert(http::header::ACCEPT, json);
        let Ok(body) = connection.send(request, "list", resource).await else { return kept };
        let Ok(mut list) = serde_json::from_str::<serde_json::Value>(&body) else { return kept };
        let token = list["metadata"]["continue"].as_str().filter(|token| !token.is_empty()).map(str::to_owned);
        if let Some(items) = list["items"].as_array_mut() {
            kept.extend(items.drain(..).filter(|item| keep(item)));
        }
        match token {
            Some(token) => params.continue_token = Some(token),
            None => return kept,
        }
    }
}
