//go:build tools

// Wrapper module that pins LiveKit ingress. Built by scripts/provision/ingress.sh with:
//
//	go build -o $TALLY_TOOLS_DIR/bin/ingress github.com/livekit/ingress/cmd/server
//
// The `tools` build tag keeps this file out of normal builds (a main package cannot be
// imported), while `go mod tidy` still records the requirement.
package tools

import (
	_ "github.com/livekit/ingress/cmd/server"
)
