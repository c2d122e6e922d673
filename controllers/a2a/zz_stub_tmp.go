package a2a

import (
	"context"
	"net/http"
)

type Binding string

const (
	BindingJSONRPC  Binding = "JSONRPC"
	BindingHTTPJSON Binding = "HTTP+JSON"
)

type Interface struct {
	URL     string
	Binding Binding
	Version Version
	Tenant  string
}

func ReadCard(ctx context.Context, hc *http.Client, allow *AllowList, agentURL string) (Interface, error) {
	return Interface{}, nil
}
func IsVersionRefused(err error) bool { return false }
func IsTransport(err error) bool      { return false }
