"""Text rules, each once: words, stems and stop words, sentences and citation markers, chunk windows,
sentence roles, and the reading of a question or a follow-up into its topic and constraints."""
