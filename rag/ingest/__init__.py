"""Ingest: corpus files read and checked, venues fetched from OpenReview, papers chunked, embedded and
written to the store."""
