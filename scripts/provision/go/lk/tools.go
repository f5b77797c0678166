//go:build tools

// Wrapper module that pins livekit-cli (`lk`) and the dependency overrides it needs on this
// project's hosts. Built by scripts/provision/livekit.sh with:
//
//	go build -tags portaudio_system -o $TALLY_TOOLS_DIR/bin/lk github.com/livekit/livekit-cli/v2/cmd/lk
//
// The `tools` build tag keeps this file out of normal builds (a main package cannot be
// imported), while `go mod tidy` still records the requirement.
package tools

import (
	_ "github.com/livekit/livekit-cli/v2/cmd/lk"
)
