"""The store: paper chunks and vectors in Chroma, the paper table (metadata and BM25 terms) beside it,
and the vector helpers they share."""
