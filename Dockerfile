# A static binary on a distroless base:
#   docker build -t kubectl-taint-evict .
#   docker run --rm kubectl-taint-evict --version
# Build: musl, so the binary needs no libc from the image.
FROM rust:1.95-alpine AS build
RUN apk add --no-cache musl-dev gcc
WORKDIR /src
# What `cargo build` reads, and nothing else (tests/fake_api/in_cluster.rs lays the context out from these
# COPYs and checks it). The workspace's manifest and lock file:
COPY Cargo.toml Cargo.lock ./
# the engine, a member of the workspace and the binary's dependency (its README is its crate docs);
COPY crates/taint-evict-engine ./crates/taint-evict-engine
# the tests' harnesses, a member of the workspace and a dev-dependency: cargo loads every member, and the
# lock file resolves dev-dependencies too, whatever it builds;
COPY crates/test-support ./crates/test-support
# the library and the binary;
COPY src ./src
# the benches' files: Cargo.toml declares them by name only, and cargo looks for each one's file when it
# loads the manifest, whatever it builds. (The tests' file is declared by path: looked for only when the
# tests are built. The examples are found by looking: none, none needed.)
COPY benches/audit.rs benches/engine.rs benches/plan.rs benches/plan_live.rs benches/run_live.rs \
     benches/real_apiserver.rs benches/record_hour.rs ./benches/
RUN cargo build --release --locked --bin kubectl-taint_evict \
 && strip target/release/kubectl-taint_evict

# Run: no shell, no package manager, a non-root user (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/target/release/kubectl-taint_evict /kubectl-taint_evict
USER 65532:65532
ENTRYPOINT ["/kubectl-taint_evict"]
CMD ["run", "--leader-elect", "--metrics-bind-address=:8080", "--log-format=json"]
