"""Projects: the store, a conversation's project, memory scopes, and what a chat's prompt sees."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent
from assistant.agent.loop import Agent, AgentConfig
from assistant.instructions import Instructions, project_label
from assistant.memory import ConversationStore, MemoryScope
from assistant.memory.inbox import Inbox
from assistant.memory.review import Review
from assistant.memory.semantic import SemanticMemory
from assistant.memory.topics import TopicStore
from assistant.memory.working import WorkingMemoryStore
from assistant.memory_policy import MemoryPolicy
from assistant.projects import Project, ProjectExistsError, ProjectStore
from assistant.workspace import Workspace
from tests.embedders import HashEmbedder
from tests.scripted import ScriptedProvider, calls

# -- the project store ---------------------------------------------------------------------------


def test_projects_are_kept_one_file_each_and_read_back(data_dir: Path) -> None:
    store = ProjectStore(data_dir)
    novel = store.create("Novel", instructions="British spelling.", knowledge=["/notes"])
    garden = store.create("Garden")
    store.update(garden.id, name="Allotment", isolated=True)
    again = ProjectStore(data_dir)
    assert [p.name for p in again.all()] == ["Allotment", "Novel"]
    assert again.get(novel.id) == novel
    assert again.get(garden.id) is not None and again.get(garden.id).isolated  # type: ignore[union-attr]
    raw = json.loads((data_dir / "projects" / f"{novel.id}.json").read_text())
    assert raw["version"] == 1
    assert raw["instructions"] == "British spelling." and raw["knowledge"] == ["/notes"]
    again.delete(novel.id)
    assert not (data_dir / "projects" / f"{novel.id}.json").exists()
    assert [p.name for p in ProjectStore(data_dir).all()] == ["Allotment"]


def test_a_name_is_taken_once_and_must_say_something(data_dir: Path) -> None:
    store = ProjectStore(data_dir)
    first = store.create("Novel")
    with pytest.raises(ProjectExistsError):
        store.create("  novel ")
    other = store.create("Poems")
    with pytest.raises(ProjectExistsError):
        store.update(other.id, name="NOVEL")
    with pytest.raises(ValueError, match="needs a name"):
        store.create("   ")
    assert store.update(first.id, name="Novel") == first  # unchanged: not written again
    assert [p.name for p in store.all()] == ["Novel", "Poems"]


def test_a_corrupt_project_file_is_set_aside_and_a_newer_one_left_alone(data_dir: Path) -> None:
    store = ProjectStore(data_dir)
    kept = store.create("Kept")
    folder = data_dir / "projects"
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    newer = {"version": 99, "id": "future", "name": "Future"}
    (folder / "future.json").write_text(json.dumps(newer), encoding="utf-8")
    again = ProjectStore(data_dir)
    assert [p.id for p in again.all()] == [kept.id]
    assert any("broken.json" in w and "moved it to" in w for w in again.warnings)
    assert any("newer version" in w for w in again.warnings)
    assert (folder / "future.json").exists()  # left as it is
    assert list(folder.glob("broken.json.corrupt-*"))


def test_project_from_json_names_the_bad_field() -> None:
    good = Project("p1", "Novel").to_json()
    assert Project.from_json(good) == Project("p1", "Novel")
    for field, value in (("isolated", "yes"), ("knowledge", "x"), ("id", "a/b"), ("name", 3)):
        with pytest.raises(ValueError, match=field):
            Project.from_json({**good, field: value})


# -- conversations in projects -------------------------------------------------------------------


def test_a_conversation_moves_between_projects_and_the_list_says_so(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    inside = store.create(project="p1")
    outside = store.create()
    assert (inside.project, outside.project) == ("p1", None)
    store.set_project(outside.id, "p2")
    store.set_project(inside.id, None)
    store.close()
    again = ConversationStore(data_dir)
    by_id = {i.id: i.project for i in again.all()}
    assert by_id == {inside.id: None, outside.id: "p2"}
    assert again.load(outside.id).project == "p2"
    again.close()
    (data_dir / "conversations" / "index.json").unlink()  # from the files alone
    rebuilt = ConversationStore(data_dir)
    assert {i.id: i.project for i in rebuilt.all()} == by_id
    rebuilt.close()


def test_a_temporary_chat_stays_outside_every_project(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    temporary = store.create(temporary=True, project="p1")
    assert temporary.project is None
    with pytest.raises(ValueError, match="temporary"):
        store.set_project(temporary.id, "p1")
    store.close()


# -- memory scopes -------------------------------------------------------------------------------


def test_a_memory_keeps_its_scope_and_each_move_is_in_its_history(data_dir: Path) -> None:
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    item = memory.add("The novel's heroine is called Ada", project="p1")
    memory.move(item.id, None)
    memory.move(item.id, "p2")
    assert memory.move(item.id, "p2").project == "p2"  # no move, no event
    memory.close()
    for _ in range(2):  # from the log, then from the index cache
        again = SemanticMemory.open(data_dir / "memory", HashEmbedder())
        assert again.get(item.id).project == "p2"  # type: ignore[union-attr]
        moves = [(e.project_before, e.project_after) for e in again.history(item.id)[1:]]
        assert moves == [("p1", None), (None, "p2")]
        again.close()
    records = (data_dir / "memory" / "semantic.jsonl").read_text().splitlines()
    scoped = [json.loads(r) for r in records if '"p1"' in r or '"p2"' in r]
    assert scoped and all(r["version"] == 4 for r in scoped)
    plain = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    plain.add("The user likes tea")
    plain.close()
    last = json.loads((data_dir / "memory" / "semantic.jsonl").read_text().splitlines()[-1])
    assert last["version"] == 2  # a global memory is readable by versions before scopes


@pytest.fixture
def scoped(data_dir: Path) -> SemanticMemory:
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    memory.add("The user drinks green tea every morning")
    memory.add("The novel draft uses green tea as a motif", project="novel")
    memory.add("The garden plan has green tea shrubs", project="garden")
    memory.add("The user is allergic to penicillin", pinned=True)
    memory.add("The novel is due in March", project="novel", pinned=True)
    return memory


def _texts(items: object) -> set[str]:
    return {getattr(i, "item", i).text for i in items}  # type: ignore[attr-defined]


def test_search_and_pinned_see_only_the_scopes_asked_for(scoped: SemanticMemory) -> None:
    everything = _texts(scoped.search("green tea", k=10))
    assert len(everything) == 3
    outside = MemoryScope()
    novel = MemoryScope("novel")
    walled = MemoryScope("novel", isolated=True)
    assert _texts(scoped.search("green tea", k=10, scopes=outside.visible)) == {
        "The user drinks green tea every morning"
    }
    assert _texts(scoped.search("green tea", k=10, scopes=novel.visible)) == {
        "The user drinks green tea every morning",
        "The novel draft uses green tea as a motif",
    }
    assert _texts(scoped.search("green tea", k=10, scopes=walled.visible)) == {
        "The novel draft uses green tea as a motif"
    }
    assert _texts(scoped.pinned(outside.visible)) == {"The user is allergic to penicillin"}
    assert _texts(scoped.pinned(walled.visible)) == {"The novel is due in March"}
    assert scoped.same_as("The garden plan has green tea shrubs", novel.visible) is None
    assert scoped.same_as("The garden plan has green tea shrubs") is not None


def test_where_a_new_memory_goes() -> None:
    assert MemoryScope().home(personal=False) is None
    assert MemoryScope("p").home(personal=True) is None
    assert MemoryScope("p").home(personal=False) == "p"
    assert MemoryScope("p", isolated=True).home(personal=True) == "p"


# -- the prompt of a chat in a project -----------------------------------------------------------


class Rig:
    """An agent on real stores (projects too) with a scripted model."""

    def __init__(self, root: Path) -> None:
        self.provider = ScriptedProvider()
        self.memory = SemanticMemory.open(root / "memory", HashEmbedder())
        self.conversations = ConversationStore(root)
        self.projects = ProjectStore(root)
        self.agent = Agent(
            self.provider,
            self.memory,
            self.conversations,
            WorkingMemoryStore(root / "memory"),
            config=AgentConfig(auto_memories=False, instructions=Instructions(answer="Be brief.")),
            projects=self.projects,
        )

    def turn(self, text: str, project: str | None = None, *, temporary: bool = False) -> str:
        """One turn in a new conversation (in `project`); the system message the model got."""
        cid = self.conversations.create(temporary=temporary, project=project).id
        self.provider.enqueue("OK.")
        events: list[AgentEvent] = []
        self.agent.run(cid, text, events.append, CancelToken())
        self.provider.assert_all_used()
        content = self.provider.requests[-1]["messages"][0]["content"]
        assert isinstance(content, str)
        return content


def _memory_ids(system: str) -> list[str]:
    return re.findall(r"^- \[([0-9a-f]{32})\]", system, flags=re.MULTILINE)


def test_the_prompt_holds_exactly_the_memories_of_the_chats_scopes(data_dir: Path) -> None:
    rig = Rig(data_dir)
    novel = rig.projects.create("Novel", instructions="Keep the tone dark.")
    garden = rig.projects.create("Garden")
    add = rig.memory.add
    mine = add("The user drinks green tea every morning")
    pinned_global = add("The user is allergic to penicillin", pinned=True)
    plot = add("The novel draft uses green tea as a motif", project=novel.id)
    due = add("The novel is due in March", project=novel.id, pinned=True)
    shrubs = add("The garden plan has green tea shrubs", project=garden.id)

    outside = _memory_ids(rig.turn("Tell me about green tea"))
    assert sorted(outside) == sorted([pinned_global.id, mine.id])

    inside = _memory_ids(rig.turn("Tell me about green tea", novel.id))
    assert sorted(inside) == sorted([due.id, pinned_global.id, plot.id, mine.id])
    # The project's first, in each section: pinned, then relevant.
    assert inside == [due.id, pinned_global.id, plot.id, mine.id]

    in_garden = _memory_ids(rig.turn("Tell me about green tea", garden.id))
    assert sorted(in_garden) == sorted([pinned_global.id, shrubs.id, mine.id])

    rig.projects.update(novel.id, isolated=True)
    walled = _memory_ids(rig.turn("Tell me about green tea", novel.id))
    assert sorted(walled) == sorted([due.id, plot.id])

    temporary = rig.turn("Tell me about green tea", temporary=True)
    assert _memory_ids(temporary) == []


def test_a_projects_instructions_come_after_the_global_ones_ahead_of_memories(
    data_dir: Path,
) -> None:
    rig = Rig(data_dir)
    novel = rig.projects.create("Novel", instructions="Keep the tone dark.")
    rig.memory.add("The user is allergic to penicillin", pinned=True)
    system = rig.turn("Hello", novel.id)
    block = system[system.index('<data source="custom instructions">') :]
    block = block[: block.index("</data>")]
    assert block.index("Be brief.") < block.index(project_label("Novel"))
    assert block.index(project_label("Novel")) < block.index("Keep the tone dark.")
    assert system.index("Keep the tone dark.") < system.index("Pinned memories")
    assert "Keep the tone dark." not in rig.turn("Hello")  # outside the project
    assert 'This chat is in the user\'s project "Novel".' in system
    assert "This chat is in the user's project" not in rig.turn("Hello")
    odd = rig.projects.create('Odd</data> "x"')
    quoted = rig.turn("Hello", odd.id)
    assert 'This chat is in the user\'s project "Odd&lt;/data&gt; \\"x\\"".' in quoted


def test_a_projects_instructions_count_in_the_prompt_budget(data_dir: Path) -> None:
    rig = Rig(data_dir)
    rig.agent.config.prompt_budget_tokens = 2000
    novel = rig.projects.create("Novel", instructions="Keep the tone dark. " * 60)
    plain = rig.projects.create("Plain")
    for i in range(60):
        rig.memory.add(f"Pinned fact number {i} about the user's long garden path", pinned=True)
    with_text = rig.turn("Hello", novel.id).count("Pinned fact number")
    without = rig.turn("Hello", plain.id).count("Pinned fact number")
    assert 0 < with_text < without < 60


def test_the_remember_tool_keeps_project_facts_in_the_project(data_dir: Path) -> None:
    rig = Rig(data_dir)
    novel = rig.projects.create("Novel")
    cid = rig.conversations.create(project=novel.id).id
    rig.provider.enqueue(
        calls(
            ("remember", {"text": "The novel's heroine is called Ada"}),
            ("remember", {"text": "The user writes in the mornings", "personal": True}),
        ),
        "Noted.",
    )
    rig.agent.run(cid, "My heroine is Ada; I write in the mornings.", lambda e: None, CancelToken())
    rig.provider.assert_all_used()
    scopes = {i.text: i.project for i in rig.memory.all()}
    assert scopes == {
        "The novel's heroine is called Ada": novel.id,
        "The user writes in the mornings": None,
    }


def test_a_fact_proposed_in_a_project_is_kept_there_when_accepted(data_dir: Path) -> None:
    """With "ask first", the proposal carries the scope the memory would have had, so the
    user's yes puts a project's fact in the project (it went global) and a personal fact
    outside it, and an isolated project keeps both."""
    rig = Rig(data_dir)
    rig.agent.config = replace(rig.agent.config, memory_policy=MemoryPolicy(mode="ask"))
    inbox = rig.agent.inbox = Inbox(data_dir / "memory")
    novel = rig.projects.create("Novel")
    walled = rig.projects.create("Diary", isolated=True)
    for project in (novel, walled):
        cid = rig.conversations.create(project=project.id).id
        rig.provider.enqueue(
            calls(
                ("remember", {"text": f"The {project.name} heroine is called Ada"}),
                ("remember", {"text": f"The user writes {project.name} at dawn", "personal": True}),
            ),
            "Proposed.",
        )
        rig.agent.run(cid, "Ada; dawn.", lambda e: None, CancelToken())
    rig.provider.assert_all_used()
    assert rig.memory.all() == []
    Review(inbox, rig.memory, TopicStore(data_dir / "memory")).accept(
        [p.id for p in inbox.pending()]
    )
    assert {i.text: i.project for i in rig.memory.all()} == {
        "The Novel heroine is called Ada": novel.id,
        "The user writes Novel at dawn": None,
        "The Diary heroine is called Ada": walled.id,
        "The user writes Diary at dawn": walled.id,
    }


def test_a_tool_cannot_reach_a_memory_outside_the_chats_scopes(data_dir: Path) -> None:
    rig = Rig(data_dir)
    garden = rig.projects.create("Garden")
    hidden = rig.memory.add("The garden plan has green tea shrubs", project=garden.id)
    cid = rig.conversations.create().id
    rig.provider.enqueue(calls(("forget", {"memory_id": hidden.id})), "Done.")
    rig.agent.run(cid, "Forget the shrubs", lambda e: None, CancelToken())
    result = rig.conversations.load(cid).messages[2]
    assert result.role == "tool" and "no memory with id" in result.content
    assert rig.memory.get(hidden.id).state == "active"  # type: ignore[union-attr]


def test_deleting_a_project_moves_its_conversations_and_memories_out(data_dir: Path) -> None:
    workspace = Workspace.open(data_dir, embed=False)
    try:
        novel = workspace.projects.create("Novel")
        cid = workspace.conversations.create(project=novel.id).id
        item = workspace.memory.add("The novel is due in March", project=novel.id)
        workspace.delete_project(novel.id)
        assert workspace.projects.all() == []
        assert workspace.conversations.load(cid).project is None
        assert workspace.memory.get(item.id).project is None  # type: ignore[union-attr]
        assert workspace.memory.history(item.id)[-1].type == "moved"
        walled = workspace.projects.create("Diary", isolated=True)
        secret = workspace.memory.add("The user keeps a diary", project=walled.id)
        workspace.delete_project(walled.id, forget_memories=True)
        assert workspace.memory.get(secret.id).state == "forgotten"  # type: ignore[union-attr]
        assert workspace.memory.resemblance("The user keeps a diary") is not None
    finally:
        workspace.close()


# -- nothing of an isolated project gets out -----------------------------------------------------


def test_an_insight_reads_one_scope_and_stays_in_it(data_dir: Path) -> None:
    from assistant.agent.reflection import Reflector
    from assistant.memory import TopicStore

    provider = ScriptedProvider()
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    topics = TopicStore(data_dir / "memory")
    mine = [memory.add(f"The user walks the dog at {h}", origin="curator") for h in (6, 7, 8)]
    walled = [
        memory.add(f"The garden bed {n} gets compost", origin="curator", project="garden")
        for n in (1, 2, 3)
    ]
    for item in [*mine, *walled]:
        topics.add_memory("routine", item.id)
    shown: list[str] = []

    def answer(messages: list[dict[str, object]]) -> str:
        listing = str(messages[1]["content"])
        shown.append(listing)
        ids = [i.id for i in walled if i.id in listing]
        return json.dumps(
            {"insights": [{"text": "The beds are composted in turn", "rests_on": ids}]}
        )

    provider.enqueue(answer)
    reflection = Reflector(provider, memory, topics).reflect("routine")
    provider.assert_all_used()
    assert all(i.id in shown[0] for i in walled) and not any(i.id in shown[0] for i in mine)
    (insight,) = reflection.insights
    assert insight.project == "garden"
    memory.close()


def test_an_isolated_projects_chats_are_searched_only_from_inside(data_dir: Path) -> None:
    rig = Rig(data_dir)
    garden = rig.projects.create("Garden", isolated=True)
    novel = rig.projects.create("Novel")
    for title, project in (("Beds", garden.id), ("Plot", novel.id), ("Loose", None)):
        cid = rig.conversations.create(title, project=project).id
        rig.conversations.append(cid, "user", f"compost talk in {title}")

    def searched(project: str | None) -> list[str]:
        cid = rig.conversations.create(project=project).id
        rig.provider.enqueue(calls(("search_conversations", {"query": "compost"})), "Done.")
        rig.agent.run(cid, "Find compost", lambda e: None, CancelToken())
        result = rig.conversations.load(cid).messages[2].content
        found = {hit["conversation"] for hit in json.loads(result)}
        return sorted(found & {"Beds", "Plot", "Loose"})  # not the searching chats

    assert searched(None) == ["Loose", "Plot"]
    assert searched(novel.id) == ["Loose", "Plot"]
    assert searched(garden.id) == ["Beds"]


def test_another_app_through_mcp_sees_only_global_memories(data_dir: Path) -> None:
    from assistant.mcp_server.operations import answer

    workspace = Workspace.open(data_dir, embed=False)
    try:
        workspace.memory.add("The user likes green tea", pinned=True)
        workspace.memory.add(
            "The novel's tea scene is in chapter two", project="novel", pinned=True
        )

        def ask(op: str, **args: object) -> str:
            return answer(workspace, {"op": op, "args": args, "client": "Test"})

        for text in (
            ask("search_memory", query="tea"),
            ask("pinned_memories"),
            ask("recent_memories"),
        ):
            assert "green tea" in text and "chapter two" not in text
    finally:
        workspace.close()
