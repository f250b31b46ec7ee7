"""Test helpers that ship with the package so downstream tests can import them."""

from pddlworlds.testing.fake_openai import FakeOpenAIServer, RecordedRequest

__all__ = ["FakeOpenAIServer", "RecordedRequest"]
