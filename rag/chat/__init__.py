"""Conversations: follow-ups condensed into standalone questions, and follow-ups about the papers
already shown answered from the last answer."""
