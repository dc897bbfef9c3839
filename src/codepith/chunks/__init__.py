"""Split a file's text into search units: syntax-aware where a grammar exists, else headings or windows."""
