"""Loopback fakes of the model APIs the real agent clients call (Anthropic Messages, OpenAI Responses)."""
