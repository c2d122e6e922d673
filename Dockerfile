# One image for both roles: `hookrun operator` and `hookrun receiver`.
# A static binary on an empty base, run as a non-root user: nothing but the
# binary and CA certificates (for agents reached over https) is in the image.
#
#   docker build -t hookrun:dev --build-arg VERSION=$(git describe --tags --always) .
#
# The base images are named without a registry host; point GO_IMAGE at your
# mirror if you have one.
ARG GO_IMAGE=golang:1.26.8-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY main.go ./
COPY api/ api/
COPY controllers/ controllers/
COPY receiver/ receiver/
ARG VERSION=dev
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/hookrun . \
 && mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tmp /tmp
COPY --from=build /out/hookrun /hookrun
# The "nonroot" user of distroless images; the chart sets the same IDs.
USER 65532:65532
ENTRYPOINT ["/hookrun"]
