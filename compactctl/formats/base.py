"""What every format reads into and writes from: the Transcript, its native state, its origins.

A reader of a native format (Claude Code, Codex, ...) remembers, in a frozen ``Native``
of its own, what each canonical message was read from (its *unit*, in the format's own
terms) and the message as read. The messages themselves carry nothing compactctl did
not read: where each came from is ``Transcript.origins``, a list beside them, so a
writer can put unchanged messages back exactly and rebuild changed ones from their
native unit, and a strategy never sees a bookkeeping key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import IO, Any, Generic, TypeVar

from compactctl.transcript import Message, is_thinking, with_added

Unit = TypeVar("Unit", covariant=True)
State = TypeVar("State", bound="Native[Any]")

# What a format reading a file more than once is given: each call opens it again, for reading
# bytes (``files.io.opener``). A format never opens a path itself: the I/O is ``files/``'s.
Opener = Callable[[], AbstractContextManager[IO[bytes]]]


@dataclass(frozen=True)
class Signature:
    """What a format's detection looks for, as groups of keys: each group needs one of its keys
    (the closest format to a file none claims is told by it, ``formats/unknown.py``)."""

    needs: tuple[tuple[str, ...], ...]
    what: str  # the shape in words, for the error

    def met(self, keys: set[str]) -> int:
        return sum(1 for group in self.needs if keys.intersection(group))

    def missing(self, keys: set[str]) -> list[str]:
        return [" or ".join(repr(key) for key in group) for group in self.needs if not keys.intersection(group)]


@dataclass(frozen=True)
class AutoCompact:
    """Where a format's producer compacts on its own, as its client's code has it: ``share`` of the
    model's window less ``reserve`` (``replay.fitted_thresholds``, replay's thresholds with no ``-t``)."""

    client: str  # its client, as its users name it: "Claude Code"
    share: float = 1.0
    reserve: int = 0  # tokens the client keeps off the window before it compacts
    usual_window: int = 200_000  # its window where neither the file nor the price list gives one
    # The window it runs a model on unless a call of the file went past it (the 1M windows the price
    # list gives some models need an opt-in); None: the listed one.
    runs_at_most: int | None = None
    provider: str | None = None  # whose models the price list is searched for the window
    # Models (by the catalog's id) it compacts only once the API refuses a call over the window: its point, the window.
    when_refused: frozenset[str] = frozenset()
    # Its rule in the releases before ``earlier[0]`` (a client that moved where it compacts): that rule.
    earlier: tuple[tuple[int, int, int], AutoCompact] | None = None

    def of_release(self, release: tuple[int, int, int] | None) -> AutoCompact:
        """The rule the client's ``release`` compacts by (this one where the file names no release)."""
        if self.earlier is not None and release is not None and release < self.earlier[0]:
            return self.earlier[1].of_release(release)
        return self

    def trigger(self, window: int) -> int:
        """The context at which it compacts, on a model of ``window`` tokens."""
        return round((window - self.reserve) * self.share)


@dataclass(frozen=True)
class Native(Generic[Unit]):
    """A reader's state for its writer; each format subclasses it with what else it needs.

    ``units[n]`` is what a message was read from and ``originals[n]`` that message as read
    (None when the file itself later replaced it, as a Codex ``compacted`` line does).
    """

    units: tuple[Unit, ...] = ()
    originals: tuple[Message | None, ...] = ()

    def added_on_resume(self) -> tuple[Message, ...]:
        """What the producer's client adds back when it resumes the file, beyond the messages it
        holds (Codex writes its initial context again after a compacted line that left it out)."""
        return ()

    def continues_another(self) -> bool:
        """Whether the client sends another file's context before these messages (a forked subagent's parent's):
        then the file may open on the model's turn."""
        return False

    def resumed(self, messages: list[Message]) -> list[Message]:
        """``messages`` as the producer's client sends them on resume: ``added_on_resume`` put back after
        the system prompt (a format whose client mends the history more says so in its own)."""
        return with_added(messages, self.added_on_resume())


@dataclass(frozen=True)
class Transcript:
    """One conversation: its messages, plus whatever surrounds them in the file."""

    messages: list[Message]
    label: str = ""  # where it is in the file when a file holds several: "line 3", "run 5"
    envelope: dict[str, Any] | None = None  # the record the messages came from (dataset line, run)
    native: Native[Any] | None = None  # the reader's state, for the writer of the same format
    # Per message: the index in ``native.units`` it was read from, None for a new message.
    # Empty when no message points into native state (built by hand, or a format without units).
    origins: tuple[int | None, ...] = ()
    read_as: str = ""  # the format it was read in ("" when built by hand)

    def __post_init__(self) -> None:
        if self.origins and len(self.origins) != len(self.messages):
            raise ValueError(
                f"a transcript has one origin per message: {len(self.origins)} origins for "
                f"{len(self.messages)} messages (use Transcript.rewritten(messages, origins))"
            )

    def rewritten(self, messages: list[Message], origins: Sequence[int | None]) -> Transcript:
        """This transcript holding ``messages``; ``origins[i]`` is the index in ``self.messages``
        message ``i`` came from (None for a new one), as a ``StepResult`` or ``Compaction`` gives it.
        """
        if len(origins) != len(messages):
            raise ValueError(f"one origin per message: {len(origins)} origins for {len(messages)} messages")
        if not self.origins:
            return dataclasses.replace(self, messages=list(messages))
        ours = self.origins
        return dataclasses.replace(
            self, messages=list(messages), origins=tuple(None if o is None else ours[o] for o in origins)
        )

    def origin(self, position: int) -> int | None:
        return self.origins[position] if self.origins else None


def native_of(transcript: Transcript, kind: type[State]) -> State | None:
    """The transcript's native state when it is ``kind``'s (a writer ignores another format's)."""
    return transcript.native if isinstance(transcript.native, kind) else None


def sources(transcript: Transcript, native: Native[Unit] | None) -> Iterator[tuple[Message, Unit | None, bool]]:
    """Each message with the native unit it was read from (None: new) and whether it is unchanged."""
    for position, message in enumerate(transcript.messages):
        index = transcript.origin(position) if native is not None else None
        if native is None or index is None or index >= len(native.units):
            yield message, None, False
        else:
            yield message, native.units[index], native.originals[index] == message


def is_unchanged(transcript: Transcript, native: Native[Any] | None) -> bool:
    """True when the messages are exactly those the reader produced (nothing was compacted)."""
    # Messages a compaction checkpoint replaced have no original (None): they are not live.
    return native is not None and transcript.messages == [m for m in native.originals if m is not None]


def converted(transcript: Transcript) -> Transcript:
    """The transcript as plain canonical messages, for a writer of another format.

    Thinking and reasoning parts are one provider's own (signed or encrypted for it): they
    do not travel to another format.
    """
    return Transcript([without_thinking(m) for m in transcript.messages], transcript.label)


def without_thinking(message: Message) -> Message:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list) or not any(map(is_thinking, content)):
        return message
    rest = [part for part in content if not is_thinking(part)]
    if not rest:
        return {**message, "content": None if message.get("tool_calls") else ""}
    if len(rest) == 1 and isinstance(rest[0], dict) and rest[0].get("type") == "text":
        return {**message, "content": rest[0].get("text", "")}
    return {**message, "content": rest}
