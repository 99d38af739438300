"""The labelled exchanges (`tests.policy_exchanges`) through the curator on a real store and a
scripted model: never-topics are left out, "only when I say remember" keeps only what was asked
for, "ask first" fills the review inbox and remembers nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.agent.curator import TOPIC_PROMPT, Curator, extract_prompt
from assistant.memory import Inbox, Message, Proposal, SemanticMemory, TopicStore
from tests.embedders import HashEmbedder
from tests.policy_exchanges import EXCHANGES, NEVER, Exchange
from tests.scripted import ScriptedProvider

REPLY = "Noted."


def test_the_set_is_large_and_covers_every_mode_and_outcome() -> None:
    assert len(EXCHANGES) >= 30
    assert {e.policy.mode for e in EXCHANGES} == {"automatic", "ask", "on_request"}
    left_out = [e for e in EXCHANGES if e.extracted and not (e.remembered or e.waiting)]
    assert len(left_out) >= 15 and any(e.remembered for e in EXCHANGES)
    assert len({e.label for e in EXCHANGES}) == len(EXCHANGES)


@pytest.mark.parametrize("exchange", EXCHANGES, ids=[e.label for e in EXCHANGES])
def test_a_labelled_exchange(data_dir: Path, exchange: Exchange) -> None:
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    inbox = Inbox(data_dir / "memory")
    try:
        existing = [memory.add(text, origin="curator") for text in exchange.existing]
        memory.bury([(f"rejected{n}", text) for n, text in enumerate(exchange.rejected)])
        inbox.propose(Proposal(text) for text in exchange.pending)
        provider = ScriptedProvider(json.dumps({"memories": list(exchange.extracted)}))
        for decision in exchange.decisions:
            target = decision.get("target")
            if isinstance(target, str) and target.startswith("#"):
                target = existing[int(target[1:])].id
            provider.enqueue(json.dumps({"decisions": [{**decision, "target": target}]}))
        provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
        curator = Curator(provider, memory, TopicStore(data_dir / "memory"), inbox)
        user = Message("u1", None, "user", exchange.user, "2026-03-03T10:00:00.000000Z")
        reply = Message("a1", "u1", "assistant", REPLY, "2026-03-03T10:00:01.000000Z")

        stored = curator.process("c1", user, reply, policy=exchange.policy)

        provider.assert_all_used()
        assert provider.requests[0]["messages"][0]["content"] == extract_prompt(exchange.policy)
        assert [i.text for i in stored] == list(exchange.remembered)
        before = {i.id for i in existing}
        added = [i.text for i in memory.all() if i.id not in before]
        assert added == list(exchange.remembered)
        assert all(i.origin == "curator" for i in stored)
        assert [p.text for p in inbox.pending()] == list(exchange.waiting)
        for proposal in inbox.pending():
            if exchange.decisions and exchange.decisions[0]["action"] == "SUPERSEDE":
                assert proposal.change == "replace" and proposal.target == existing[0].id
        if exchange.policy.mode == "ask":
            found = [h.item.text for h in memory.search(exchange.user, k=10)]
            assert not set(exchange.waiting) - set(exchange.existing) & set(found)
    finally:
        memory.close()


def test_the_never_rule_is_in_the_curators_prompt_with_the_users_own_topics() -> None:
    prompt = extract_prompt(NEVER)
    assert "never be remembered" in prompt
    for words in ("health (illnesses", "money (income", "other people's names", '"my ex"'):
        assert words in prompt
    assert '"politics"' in prompt
