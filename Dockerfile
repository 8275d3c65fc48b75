# A static binary on a distroless base:
#   docker build -t kubectl-taint-evict .
#   docker run --rm kubectl-taint-evict --version
# Build: musl, so the binary needs no libc from the image.
FROM rust:1.95-alpine AS build
RUN apk add --no-cache musl-dev gcc
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY benches ./benches
COPY examples ./examples
COPY tests ./tests
RUN cargo build --release --locked --bin kubectl-taint_evict \
 && strip target/release/kubectl-taint_evict

# Run: no shell, no package manager, a non-root user (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/target/release/kubectl-taint_evict /kubectl-taint_evict
USER 65532:65532
ENTRYPOINT ["/kubectl-taint_evict"]
CMD ["run", "--leader-elect", "--metrics-bind-address=:8080", "--log-format=json"]
