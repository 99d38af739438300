"""A conversation's model and the options people expect (temperature, top-p, reply and context
sizes, tool use: on, off, auto), per model in the settings and per conversation over them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QComboBox, QWidget
from pytestqt.qtbot import QtBot

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, Finished, ToolsTurnedOff
from assistant.agent.loop import Agent
from assistant.agent.model_choice import TurnModel
from assistant.agent.turn import LOOPING_NOTICE
from assistant.json_fields import FieldError
from assistant.memory import ConversationStore
from assistant.memory.semantic import SemanticMemory
from assistant.memory.working import WorkingMemoryStore
from assistant.model_options import MIN_CONTEXT, ModelOptions
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.settings.dialog import SettingsDialog
from assistant.ui.settings.form import SettingsForm
from assistant.ui.settings.model_options_form import ModelOptionsFields
from assistant.ui.settings.models_page import ModelsPage
from assistant.workspace import Workspace
from tests.desktop import configure
from tests.fake_openai import FakeOpenAI, Reply
from tests.scripted import ScriptedProvider, calls


def run_turn(agent: Agent, cid: str, text: str) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    agent.run(cid, text, events.append, CancelToken())
    return events


def test_the_conversations_model_and_options_are_sent(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    workspace = Workspace.open(data_dir)
    try:
        workspace.set_model_options(
            "small-model", ModelOptions(temperature=0.7, top_p=0.9, max_tokens=64, tools="off")
        )
        agent = workspace.agent()
        plain = workspace.conversations.create().id
        chosen = workspace.conversations.create().id
        workspace.conversations.set_model(chosen, "small-model", ModelOptions(temperature=0.2))
        run_turn(agent, plain, "Hello")
        run_turn(agent, chosen, "Hello")
        run_turn(agent, chosen, "Again")  # a new turn reads the choice from the file each time
    finally:
        workspace.close()
    default, *small = [r.body for r in fake_openai.requests_to("/v1/chat/completions")]
    assert default["model"] == "chat-model"
    assert "temperature" not in default and "top_p" not in default and "tools" in default
    for body in small:
        assert body["model"] == "small-model"
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.9, 64)
        assert "tools" not in body  # "off" for this model

    reopened = ConversationStore(data_dir).load(chosen)
    assert (reopened.model, reopened.options) == ("small-model", ModelOptions(temperature=0.2))


def test_a_context_length_set_for_the_model_bounds_the_prompt(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    workspace = Workspace.open(data_dir)
    try:
        workspace.set_model_options("chat-model", ModelOptions(context_tokens=2048))
        cid = workspace.conversations.create().id
        for n in range(12):
            workspace.conversations.append(cid, "user", f"message {n} " + "words " * 150)
            workspace.conversations.append(cid, "assistant", "noted " * 100)
        run_turn(workspace.agent(), cid, "And now?")
    finally:
        workspace.close()
    *_, body = [r.body for r in fake_openai.requests_to("/v1/chat/completions")]
    assert len(json.dumps(body["messages"])) < 2048 * 4  # older messages were left out
    assert body["max_tokens"] < 2048


def looping_replies() -> list[object]:
    return [
        calls(("current_datetime", {})),
        calls(("current_datetime", {})),
        calls(("current_datetime", {})),
        "It is late.",
    ]


def test_auto_tool_use_turns_tools_off_for_a_model_that_loops(data_dir: Path) -> None:
    provider = ScriptedProvider(*looping_replies(), "Without tools.")  # type: ignore[arg-type]
    learned: list[str] = []
    options = ModelOptions(tools="auto")

    def choose(_conversation: object) -> TurnModel:
        used = options.learned_off() if learned else options
        return TurnModel(provider, used, learned.append)

    conversations = ConversationStore(data_dir)
    agent = Agent(
        provider,
        SemanticMemory.open(data_dir / "memory"),
        conversations,
        WorkingMemoryStore(data_dir / "memory"),
        choose_model=choose,
    )
    cid = conversations.create().id
    events = run_turn(agent, cid, "What time is it?")
    assert learned == ["scripted"]
    assert [e.model for e in events if isinstance(e, ToolsTurnedOff)] == ["scripted"]
    assert not any(getattr(e, "text", "") == LOOPING_NOTICE for e in events)
    assert any(isinstance(e, Finished) for e in events)

    run_turn(agent, cid, "And the date?")
    assert provider.requests[-1]["tools"] is None  # remembered: no tools offered
    provider.assert_all_used()


def test_the_workspace_remembers_that_tools_went_off_and_on(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    workspace = Workspace.open(data_dir)
    try:
        workspace.set_model_options("chat-model", ModelOptions(tools="auto"))
        workspace.tools_looped("chat-model")
        saved, _ = Settings.load(settings_file(data_dir))
        assert saved.options_for("chat-model") == ModelOptions(tools="auto", tools_learned_off=True)
        assert not saved.options_for("chat-model").uses_tools
        workspace.set_model_options(
            "chat-model", saved.options_for("chat-model").learned_off(False)
        )
        assert workspace.settings.options_for("chat-model").uses_tools
    finally:
        workspace.close()


def test_options_in_files_are_checked_and_layered() -> None:
    model = ModelOptions(temperature=0.8, top_p=0.5, tools="auto", tools_learned_off=True)
    mine = ModelOptions(temperature=0.1)
    assert mine.over(model) == ModelOptions(0.1, 0.5, None, None, "auto", True)
    assert ModelOptions.from_json(model.to_json()) == model
    with pytest.raises(FieldError, match=r"gpt\.temperature: must be between 0 and 2"):
        ModelOptions.from_json({"temperature": 3}, "gpt")
    with pytest.raises(FieldError, match="tools"):
        ModelOptions.from_json({"tools": "sometimes"})
    settings, warnings = Settings.from_json({"model_options": {"m": {"top_p": "high"}}})
    assert settings.model_options == {} and "m.top_p" in warnings[0]


def test_a_bad_model_option_costs_only_itself(data_dir: Path) -> None:
    """One value out of range was the whole `model_options` dropped, and erased at the next
    save: every model's options went. Now only that value is left out, with a warning."""
    raw = {
        "chat-model": {"temperature": 0.3, "context_tokens": 100},
        "vision-model": {"temperature": 1.5},
        "odd-model": "fast",
    }
    path = settings_file(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "model_options": raw}))
    settings, warnings = Settings.load(path)
    assert settings.options_for("chat-model") == ModelOptions(temperature=0.3)
    assert settings.options_for("vision-model") == ModelOptions(temperature=1.5)
    assert len(warnings) == 2
    assert "chat-model.context_tokens: must be between 256" in warnings[0]
    settings.save(path)
    again, _ = Settings.load(path)
    assert again.model_options == {
        "chat-model": {"temperature": 0.3},
        "vision-model": {"temperature": 1.5},
    }


def test_a_context_length_typed_under_the_least_becomes_the_least(qtbot: QtBot) -> None:
    """The box took 1-255, which no model options file accepts (the value was dropped)."""
    parent = QWidget()
    qtbot.addWidget(parent)
    fields = ModelOptionsFields(SettingsForm(parent), parent, "the server's own")
    fields.context.setValue(100)
    assert fields.options().context_tokens == MIN_CONTEXT
    fields.context.editingFinished.emit()
    assert fields.context.value() == MIN_CONTEXT
    fields.context.setValue(0)
    fields.context.editingFinished.emit()
    assert fields.options().context_tokens is None and fields.context.text() == "Default"


def test_a_model_that_refuses_a_temperature_is_asked_without_it(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    fake_openai.enqueue(
        Reply.error(400, "Unsupported parameter: 'temperature' is not supported with this model."),
        Reply.text("Fine without it."),
        Reply.text("Still fine."),
    )
    workspace = Workspace.open(data_dir)
    try:
        workspace.set_model_options("chat-model", ModelOptions(temperature=0.5, top_p=0.9))
        agent = workspace.agent()
        cid = workspace.conversations.create().id
        events = run_turn(agent, cid, "Hello")
        run_turn(agent, cid, "Again")
    finally:
        workspace.close()
    assert [e.text for e in events if isinstance(e, Finished)] == ["Fine without it."]
    refused, retried, later = [r.body for r in fake_openai.requests_to("/v1/chat/completions")]
    assert refused["temperature"] == 0.5
    assert "temperature" not in retried and retried["top_p"] == 0.9
    assert "temperature" not in later  # remembered for this server and model


@pytest.mark.gui
def test_the_settings_edit_each_models_options(qtbot: QtBot, data_dir: Path) -> None:
    settings = Settings(chat_model="big-model")
    settings.set_options_for("small-model", ModelOptions(tools="auto", tools_learned_off=True))
    settings.save(settings_file(data_dir))
    workspace = Workspace.open(data_dir)
    try:
        dialog = SettingsDialog(workspace)
        qtbot.addWidget(dialog)
        dialog.show()
        model = dialog.findChild(QComboBox, "optionsModelCombo")
        assert model is not None and model.currentText() == "big-model"
        assert [model.itemText(i) for i in range(model.count())] == ["big-model", "small-model"]
        page = next(p for p in dialog.pages if isinstance(p, ModelsPage))
        page.options.temperature.setValue(0.4)
        model.setCurrentText("small-model")  # big-model's edit is kept meanwhile
        assert page.options.tools_back_on.isVisibleTo(page)
        page.options.tools_back_on.setChecked(True)
        model.setCurrentText("typed-model")
        page.options.max_tokens.setValue(512)
        dialog.accept()
    finally:
        workspace.close()
    saved, _ = Settings.load(settings_file(data_dir))
    assert saved.options_for("big-model") == ModelOptions(temperature=0.4)
    assert saved.options_for("small-model") == ModelOptions(tools="auto")  # tools back on
    assert saved.options_for("typed-model") == ModelOptions(max_tokens=512)
