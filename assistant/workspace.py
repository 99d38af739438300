"""Everything the app keeps in one data directory, opened together, and the agent built on it."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.agent.capabilities import CapabilityMemory, server_key
from assistant.credentials import Credentials
from assistant.errors import AssistantError, ProviderError, StorageError
from assistant.instructions import Instructions
from assistant.knowledge import AttachmentStore, Knowledge
from assistant.mcp_client.manager import McpManager
from assistant.memory import (
    Conversation,
    ConversationStore,
    Embedder,
    Inbox,
    LazyEmbedder,
    Review,
    SemanticMemory,
    TopicStore,
    WorkingMemoryStore,
)
from assistant.memory.memory_keys import tie_memories_to_messages
from assistant.memory_policy import AUTOMATIC, MemoryPolicy
from assistant.model_options import ModelOptions
from assistant.notices import Notices
from assistant.openai_client import OpenAIClients
from assistant.paths import memory_dir, settings_file
from assistant.projects import ProjectStore
from assistant.settings import BASE_URL_ENV, LOCAL_EMBEDDING_MODEL, Settings

if TYPE_CHECKING:
    from assistant.agent.cancel import CancelToken
    from assistant.agent.chat import ChatProvider
    from assistant.agent.confirm import Confirmations
    from assistant.agent.loop import Agent, UpkeepRunner
    from assistant.agent.model_choice import TurnModel
    from assistant.agent.provider import OpenAIProvider
    from assistant.agent.reflection import Reflection, Reflector, Tries
    from assistant.agent.turn_gate import TurnGate
    from assistant.mcp_client.agent_tools import McpToolSource
    from assistant.mcp_client.selection import ToolIndex


log = logging.getLogger(__name__)


@dataclass
class Workspace:
    """The stores of one data directory, the settings and the credentials."""

    root: Path
    settings: Settings
    credentials: Credentials
    memory: SemanticMemory
    conversations: ConversationStore
    working: WorkingMemoryStore
    topics: TopicStore
    knowledge: Knowledge  # the knowledge folders (loaded and kept up to date by a service)
    attachments: AttachmentStore  # files attached to messages, by conversation
    inbox: Inbox  # memories proposed while the policy is "ask first", waiting for review
    projects: ProjectStore  # projects: their names, instructions and knowledge folders
    warnings: list[str] = field(default_factory=list)
    notices: Notices = field(default_factory=Notices)
    capabilities: CapabilityMemory = field(init=False)
    embedder: Embedder | None = None  # the one the stores use
    reflection_tries: Tries | None = None  # when reflection last ran, for every turn's agent
    clients: OpenAIClients = field(default_factory=OpenAIClients)  # closed with the workspace
    mcp: McpManager = field(init=False)  # the MCP servers of mcp.json; `mcp.start()` runs them

    def __post_init__(self) -> None:
        # What each server was found to support outlives the provider of one turn.
        self.capabilities = CapabilityMemory(self.notices.say)
        self.mcp = McpManager(self.root, self.credentials)
        self._tool_index: ToolIndex | None = None

    @classmethod
    def open(
        cls,
        root: Path,
        credentials: Credentials | None = None,
        *,
        embed: bool = True,
        embedder_before: Embedder | None = None,
    ) -> Workspace:
        """Open (or create) every store in `root`; problems found on disk become warnings.

        Without `embed` the stores search by keywords only and the keyring is not read (an
        export, say): vectors are filled in when the app next opens the data dir.
        `embedder_before`: the embedder of a workspace opened on `root` before, kept if the
        settings still name it (the built-in model is not loaded again).
        """
        settings, warnings = Settings.load(settings_file(root))
        credentials = credentials or Credentials()
        notices = Notices()
        clients = OpenAIClients()
        embedder = (
            _embedder(settings, credentials, notices, clients, embedder_before) if embed else None
        )
        memory = SemanticMemory.open(memory_dir(root), embedder)
        workspace = cls(
            root=root,
            settings=settings,
            credentials=credentials,
            memory=memory,
            conversations=ConversationStore(root, embedder),
            working=WorkingMemoryStore(memory_dir(root)),
            topics=TopicStore(memory_dir(root)),
            knowledge=Knowledge(root, embedder),
            attachments=AttachmentStore(root),
            inbox=Inbox(memory_dir(root)),
            projects=ProjectStore(root),
            notices=notices,
            embedder=embedder,
            clients=clients,
        )
        workspace.conversations.all()  # scans changed files: their problems are reported now
        workspace._tie_knowledge_to_projects()
        workspace._tie_working_memory_to_conversations()
        tie_memories_to_messages(memory, workspace.conversations)
        workspace.warnings = [
            *warnings,
            *memory.warnings,
            *workspace.conversations.warnings,
            *workspace.working.warnings,
            *workspace.topics.warnings,
            *workspace.inbox.warnings,
            *workspace.knowledge.warnings,
            *workspace.projects.warnings,
        ]
        return workspace

    def _tie_knowledge_to_projects(self) -> None:
        """The projects' knowledge folders are read with the global ones, now and as they
        change (whoever keeps the index up to date rescans on a project's change)."""

        def update(_project_id: str = "") -> None:
            self.knowledge.set_project_folders({p.id: p.knowledge for p in self.projects.all()})

        update()
        self.projects.subscribe(update)

    def drop_leftover_chats(self, among: Collection[str] | None = None) -> None:
        """Delete the empty and temporary conversations an earlier run left behind, or those of
        `among` that are (one with records this version cannot read is not empty: it is kept)."""
        for info in self.conversations.all():
            if (among is None or info.id in among) and (info.temporary or info.empty):
                self.delete_quietly(info.id)

    def delete_quietly(self, conversation_id: str) -> None:
        """Delete a conversation with nothing to lose in it; a failure is only logged."""
        try:
            self.conversations.delete(conversation_id)
        except AssistantError as exc:  # gone already, or the disk refuses
            log.info("Could not delete conversation %s: %s", conversation_id, exc)

    def _tie_working_memory_to_conversations(self) -> None:
        """A conversation's working memory and attachments go with it: at once, and for those
        gone before (working memory)."""

        def drop_if_gone(conversation_id: str) -> None:
            if self.conversations.exists(conversation_id):
                return
            self.attachments.drop(conversation_id)
            try:
                self.working.drop(conversation_id)
            except StorageError as exc:  # the conversation is gone all the same
                log.warning("Could not drop the working memory of %s: %s", conversation_id, exc)

        for conversation_id in self.working.conversation_ids():
            drop_if_gone(conversation_id)
        self.conversations.subscribe(drop_if_gone)

    def is_configured(self) -> bool:
        """Whether a model server is set up: a key for OpenAI, or a local or custom URL."""
        return _configured(self.settings, self.credentials)

    def save_settings(self) -> None:
        """Write the settings and give the memory the embedder they describe."""
        self.settings.save(settings_file(self.root))
        # A new embedder even for the same model: the URL or the key may have changed (and with
        # them the client). The store keeps its vectors when the model name is the same.
        embedder = _embedder(
            self.settings, self.credentials, self.notices, self.clients, self.embedder
        )
        self.embedder = embedder
        self.memory.set_embedder(embedder)
        self.conversations.set_embedder(embedder)
        self.knowledge.index.set_embedder(embedder)

    def provider(self) -> OpenAIProvider:
        """The chat provider the settings describe; ProviderError if none is configured."""
        from assistant.agent.provider import OpenAIProvider  # the openai package loads slowly

        if not self.is_configured():
            raise ProviderError(
                "No model server is set up yet. Open Settings to connect one.", status="Not set up"
            )
        client = self.clients.get(self.settings, self.credentials)
        return OpenAIProvider(client, self.settings.chat_model, capabilities=self.capabilities)

    def refuses_images(self, model: str) -> bool:
        """Whether `model` on the configured server was found not to take images (this run)."""
        key = (server_key(self.settings.effective_base_url()), model)
        return not self.capabilities.get(key).images

    def set_instructions(self, instructions: Instructions) -> None:
        """Keep the user's custom instructions (the next turn's prompt has them).

        StorageError if they cannot be saved; the settings are then as they were.
        """
        changed = dataclasses.replace(
            self.settings,
            instructions_about=instructions.about,
            instructions_answer=instructions.answer,
        )
        changed.save(settings_file(self.root))
        self.settings.instructions_about = instructions.about
        self.settings.instructions_answer = instructions.answer

    def set_policy(self, policy: MemoryPolicy) -> None:
        """Keep the global memory policy (the next agent follows it).

        StorageError if it cannot be saved; the settings are then as they were.
        """
        changed = dataclasses.replace(
            self.settings,
            memory_policy=policy.mode,
            never_remember=list(policy.never),
            never_remember_own=list(policy.own),
        )
        changed.save(settings_file(self.root))
        self.settings.memory_policy = changed.memory_policy
        self.settings.never_remember = changed.never_remember
        self.settings.never_remember_own = changed.never_remember_own

    def delete_project(self, project_id: str, *, forget_memories: bool = False) -> None:
        """Delete a project: its conversations move to no project and its memories become
        global (each with a "moved" event), or are forgotten with `forget_memories`; then its
        file goes."""
        for info in self.conversations.all():
            if info.project == project_id:
                self.conversations.set_project(info.id, None)
        for item in self.memory.all(state=None):
            if item.project == project_id and item.state != "forgotten":
                if forget_memories:
                    self.memory.forget(item.id)
                else:
                    self.memory.move(item.id, None)
        self.projects.delete(project_id)

    def instructions_for(self, conversation: Conversation | None) -> Instructions:
        """The instructions a conversation's prompt has: the global ones, and its project's."""
        instructions = self.settings.instructions()
        project = None if conversation is None else self.projects.get(conversation.project)
        if project is None or conversation is None or conversation.temporary:
            return instructions
        return instructions.in_project(project.name, project.instructions)

    def adopt_instructions(self, instructions: Instructions) -> bool:
        """Take an export's custom instructions if there are none here (nothing is replaced);
        whether they were taken. StorageError if they cannot be saved."""
        if instructions.empty or not self.settings.instructions().empty:
            return False
        self.set_instructions(instructions)
        return True

    def adopt_policy(self, policy: MemoryPolicy) -> bool:
        """Take an export's memory policy if the one here is the default (nothing the user set
        is replaced); whether it was taken. StorageError if it cannot be saved."""
        if self.settings.policy() != AUTOMATIC or policy == AUTOMATIC:
            return False
        self.set_policy(policy)
        return True

    def agent_fingerprint(self) -> tuple[str, str | None, str | None]:
        """What the agent is built from (the settings but the window's state, the key, the
        server override): an agent is good for as long as this stays the same."""
        built_from = {k: v for k, v in self.settings.to_json().items() if k != "ui_state"}
        return (
            json.dumps(built_from, sort_keys=True),
            self.credentials.api_key(),
            os.environ.get(BASE_URL_ENV),
        )

    def agent(
        self,
        upkeep: UpkeepRunner | None = None,
        confirmations: Confirmations | None = None,
        gate: TurnGate | None = None,
    ) -> Agent:
        """A new agent on this workspace, with a provider built from the current settings and
        the tools of the MCP servers that are ready.

        `upkeep` runs the memory upkeep after each reply (default: in the turn, before it ends);
        `confirmations` carries the user's answers when an MCP tool asks before it runs; with a
        `gate`, upkeep asks the model only between turns (see `turn_gate`).
        """
        from assistant.agent.curator import Curator  # the agent loads on first use: a faster start
        from assistant.agent.loop import Agent, AgentConfig, run_now
        from assistant.agent.turn_gate import GivingWayProvider

        provider = self.provider()
        background: ChatProvider = provider
        if gate is not None:
            background = GivingWayProvider(provider, gate)
        config = AgentConfig(
            max_steps=self.settings.max_steps,
            memories_per_prompt=self.settings.memories_per_prompt,
            prompt_budget_tokens=self.settings.prompt_budget_tokens,
            reply_max_tokens=self.settings.reply_max_tokens,
            auto_memories=self.settings.auto_memories,
            instructions=self.settings.instructions(),
            memory_policy=self.settings.policy(),
        )
        return Agent(
            provider,
            self.memory,
            self.conversations,
            self.working,
            config=config,
            curator=Curator(background, self.memory, self.topics, self.inbox),
            reflector=self._reflector(background),
            notices=self.notices,
            upkeep=upkeep or run_now,
            extra_tools=self._mcp_tools(),
            confirmations=confirmations,
            knowledge=self.knowledge,
            attachments=self.attachments,
            choose_model=self._turn_model,
            projects=self.projects,
            inbox=self.inbox,
        )

    def review(self) -> Review:
        """Accepting and rejecting what waits in the review inbox."""
        return Review(self.inbox, self.memory, self.topics)

    def _turn_model(self, conversation: Conversation) -> TurnModel:
        """A turn's model: the conversation's choice or the settings' one, with the options
        in force (the conversation's over the model's)."""
        from assistant.agent.model_choice import TurnModel
        from assistant.agent.provider import OpenAIProvider

        model = conversation.model or self.settings.chat_model
        options = conversation.options.over(self.settings.options_for(model))
        provider = OpenAIProvider(
            self.clients.get(self.settings, self.credentials),
            model,
            extra_params=options.request_params(),
            capabilities=self.capabilities,
        )
        return TurnModel(provider, options, self.tools_looped)

    def tools_looped(self, model: str) -> None:
        """With "auto" tool use, `model` looped on tools: it gets none from now on."""
        self.set_model_options(model, self.settings.options_for(model).learned_off())

    def set_model_options(self, model: str, options: ModelOptions) -> None:
        """Keep `model`'s options in the settings. StorageError if they cannot be saved (the
        settings are then as they were)."""
        changed = dataclasses.replace(self.settings)
        changed.set_options_for(model, options)
        changed.save(settings_file(self.root))
        self.settings.model_options = changed.model_options

    def _mcp_tools(self) -> McpToolSource:
        from assistant.mcp_client.agent_tools import McpToolSource
        from assistant.mcp_client.selection import ToolIndex

        if self._tool_index is None or self._tool_index.embedder is not self.embedder:
            self._tool_index = ToolIndex(self.embedder)
        return McpToolSource(
            self.mcp,
            self._tool_index,
            disabled=self.settings.mcp_tools_off,
            trusted=self.settings.mcp_trusted,
            on_trust=self._trust_tool,
            save_image=self.attachments.save_tool_image,
        )

    def _trust_tool(self, key: str) -> None:
        """The user always allows the MCP tool `server/tool`: kept in the settings."""
        if key not in self.settings.mcp_trusted:
            self.settings.mcp_trusted = [*self.settings.mcp_trusted, key]
            self.settings.save(settings_file(self.root))

    def _reflector(self, provider: ChatProvider) -> Reflector:
        from assistant.agent.reflection import Reflector, Tries

        if self.reflection_tries is None:
            self.reflection_tries = Tries()
        return Reflector(
            provider,
            self.memory,
            self.topics,
            after_memories=self.settings.reflection_after_memories,
            per_day=self.settings.reflection_per_day,
            tries=self.reflection_tries,
            inbox=self.inbox,
        )

    def reflect(self, topic: str | None = None, cancel: CancelToken | None = None) -> Reflection:
        """Write insights from a topic's recent memories now (the sidebar's "Reflect"), within
        the daily cap; blocks (not on the GUI thread). ProviderError if no model is set up."""
        return self._reflector(self.provider()).reflect(topic, cancel=cancel)

    def close(self) -> None:
        """Close the stores (saving caches and dropping forgotten memories from disk) and the
        server connections."""
        self.mcp.close()
        self.memory.close()
        self.conversations.close()
        self.knowledge.close()
        self.clients.close()


def _configured(settings: Settings, credentials: Credentials) -> bool:
    if os.environ.get(BASE_URL_ENV):
        return True
    if settings.provider == "openai":
        return credentials.api_key() is not None
    return bool(settings.effective_base_url())


def _embedder(
    settings: Settings,
    credentials: Credentials,
    notices: Notices,
    clients: OpenAIClients,
    current: Embedder | None = None,
) -> Embedder | None:
    """The embedder of the settings: the built-in one (`current` if it is that, as the model
    is loaded), the server's (None while no server is set up), or None for keyword-only memory.
    """
    if settings.embedding_model == LOCAL_EMBEDDING_MODEL:
        from assistant.memory import LocalEmbedder  # light: loads on first use

        return current if isinstance(current, LocalEmbedder) else LocalEmbedder()
    if not settings.embedding_model or not _configured(settings, credentials):
        return None
    model = settings.embedding_model

    def build() -> Embedder:
        from assistant.memory import OpenAIEmbedder  # loads openai on first use

        return OpenAIEmbedder(clients.get(settings, credentials), model, on_notice=notices.say)

    return LazyEmbedder(model, build)
