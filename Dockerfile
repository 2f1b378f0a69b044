# Multi-stage build: a static reach binary (migrations, templates and static
# files are embedded) on a distroless base.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=docker
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/reach ./cmd/reach

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reach /usr/local/bin/reach
EXPOSE 8080
ENV REACH_ADDR=:8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["/usr/local/bin/reach", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/reach"]
CMD ["serve"]
