module github.com/satquic/satquic

go 1.26
