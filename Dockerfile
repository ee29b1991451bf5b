# Tether in a container: docker build -t tether . && docker run -p 8787:8787 tether
# Build stage: a static binary (CGO off; the SQLite driver is pure Go).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/tether ./cmd/tether \
 && mkdir -p /out/data

# Run stage: no shell, no package manager, non-root (uid 65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tether /usr/local/bin/tether
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV TETHER_LISTEN=0.0.0.0:8787 \
    TETHER_STORE=/data/tether.db
VOLUME /data
EXPOSE 8787
ENTRYPOINT ["/usr/local/bin/tether"]
CMD ["serve"]
