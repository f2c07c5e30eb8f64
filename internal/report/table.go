package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Table is a titled grid of already formatted cells.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
}

// AddRow appends a row; it must have one cell per column.
func (t *Table) AddRow(cells ...string) error {
	if len(cells) != len(t.Columns) {
		return fmt.Errorf("report: row of %d cells in a table of %d columns", len(cells), len(t.Columns))
	}
	t.Rows = append(t.Rows, cells)
	return nil
}

// WriteText writes the table for a terminal: the title, a header, a rule,
// and the rows, with numeric cells right-aligned and the others left.
func (t *Table) WriteText(w io.Writer) error {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, r := range t.Rows {
		for i := range min(len(r), len(widths)) {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	writeRow(&b, t.Columns, widths, false)
	total := 0
	for _, wd := range widths {
		total += wd
	}
	b.WriteString(strings.Repeat("-", total+2*max(len(widths)-1, 0)) + "\n")
	for _, r := range t.Rows {
		writeRow(&b, r, widths, true)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRow(b *strings.Builder, cells []string, widths []int, alignNumbers bool) {
	for i, wd := range widths {
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		pad := strings.Repeat(" ", wd-utf8.RuneCountInString(cell))
		if i > 0 {
			b.WriteString("  ")
		}
		if alignNumbers && isNumeric(cell) {
			b.WriteString(pad + cell)
		} else if i < len(widths)-1 {
			b.WriteString(cell + pad)
		} else {
			b.WriteString(cell)
		}
	}
	b.WriteString("\n")
}

// isNumeric reports whether a cell reads as a number, possibly with a
// percent sign or a unit-free suffix like "x".
func isNumeric(cell string) bool {
	s := strings.TrimSpace(cell)
	s = strings.TrimSuffix(s, "%")
	s = strings.TrimSuffix(s, "x")
	if s == "" {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// WriteCSV writes the header and the rows as RFC 4180 CSV (no title).
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return fmt.Errorf("report: writing CSV: %w", err)
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return fmt.Errorf("report: writing CSV: %w", err)
	}
	return nil
}
