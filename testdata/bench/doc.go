// Package bench measures sanitize.Clean against peer libraries on the same
// input, in the same run. It is a separate module so that the diagrelay
// module's go.mod names only what diagrelay itself uses; the figures are in
// docs/performance.md.
package bench
