//go:build tools

// Wrapper module that pins LiveKit egress. Built by scripts/provision/egress.sh, next to a
// patched copy of the module in ./egress (see the replace in go.mod), with:
//
//	go build -o $TALLY_TOOLS_DIR/bin/egress github.com/livekit/egress/cmd/server
//
// The `tools` build tag keeps this file out of normal builds (a main package cannot be
// imported), while `go mod tidy` still records the requirement.
package tools

import (
	_ "github.com/livekit/egress/cmd/server"
)
