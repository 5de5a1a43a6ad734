# Build a static feedsvc binary, then ship it alone on a minimal image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# go.mod replaces rrule-go with the patched copy in the tree; its go.mod
# must be there for the module download.
COPY internal/third_party/rrule-go/go.mod internal/third_party/rrule-go/
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/feedsvc ./cmd/feedsvc

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/feedsvc /usr/local/bin/feedsvc
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/feedsvc"]
CMD ["serve"]
