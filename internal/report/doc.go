// Package report turns experiment results into what people read: aligned
// terminal tables, CSV and JSON files, and PNG figures drawn with
// gonum/plot (line and point panels, empirical CDFs, box plots, several
// panels per image). It knows nothing about FEC or QUIC: `satquic sim`
// (fec/fecsim), `satquic bench` (bench) and `satquic load` build Tables
// and Figures from their own result types. It is the module's own
// presentation layer, not an API, hence internal; it sits below every
// package that presents results, so that fec/fecsim need not import bench.
//
// Files: table.go (Table: text and CSV), encode.go (JSON), figure.go
// (Figure, Panel, Series and the PNG writer), grid.go (box-plot panels and
// a titled grid that mixes them with the other panels).
package report
