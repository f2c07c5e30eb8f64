// Package report turns experiment results into what people read: aligned
// terminal tables, CSV and JSON files, and PNG figures drawn with
// gonum/plot (line and point panels, empirical CDFs, box plots, several
// panels per image). It knows nothing about FEC or QUIC: `satquic sim` and
// `satquic bench` build Tables and Figures from their own result types.
//
// Files: table.go (Table: text and CSV), encode.go (JSON), figure.go
// (Figure, Panel, Series and the PNG writer), grid.go (box-plot panels and
// a titled grid that mixes them with the other panels).
package report
