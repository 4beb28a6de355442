"""What an operation's name says it does to which resource, for APIs whose paths name no resource.

RPC-style APIs put every operation on one path (``POST /#X-Amz-Target=Personalize.DescribeCampaign``,
``POST /rpc``) or on paths that follow no collection/item shape, so the path cannot say that
``DescribeCampaign`` reads the record ``CreateCampaign`` made. The operation's name can: a CRUD verb
and the resource's noun (``create_campaign``, ``describe_campaign``, ``list_campaigns``,
``update_campaign``, ``delete_campaign``; after a tag prefix too: ``repos_get_branch``).
:func:`named_operation` reads (effect, entity name) from such a name; the OpenAPI importer then looks
for the entity's schema in what the operations send and return, and for the key parameter that names
one record (:func:`key_parameter`). The vocabulary is English verbs and id-like suffixes; no rule names
an API.
"""

from __future__ import annotations

from collections.abc import Iterable

from compoworld_assets.engine.specs.infer import entity_name, singular, snake_name
from compoworld_assets.engine.specs.model import Effect

NAME_VERBS: dict[str, Effect] = {
    "create": Effect.CREATE, "add": Effect.CREATE, "insert": Effect.CREATE, "new": Effect.CREATE,
    "get": Effect.READ, "describe": Effect.READ, "fetch": Effect.READ, "retrieve": Effect.READ,
    "read": Effect.READ, "show": Effect.READ, "view": Effect.READ,
    "list": Effect.LIST,
    "search": Effect.SEARCH, "find": Effect.SEARCH, "query": Effect.SEARCH,
    "update": Effect.UPDATE, "modify": Effect.UPDATE, "patch": Effect.UPDATE, "edit": Effect.UPDATE,
    "delete": Effect.DELETE, "remove": Effect.DELETE, "destroy": Effect.DELETE,
}
KEYED = frozenset({Effect.READ, Effect.UPDATE, Effect.DELETE})
# Words between the verb and the noun that name no resource (``get_all_campaigns``, ``delete_a_key``).
_FILLERS = frozenset({"a", "an", "the", "all", "one", "my", "new", "existing", "current", "single", "specific",
                      "details", "detail", "info", "information"})
# The noun ends where a qualifier starts (``list_jobs_by_status``, ``get_user_for_team``).
_CUT_WORDS = frozenset({"by", "for", "from", "to", "in", "of", "with", "on", "at", "into", "as", "using", "v1",
                        "v2", "v3", "and", "or"})
_MEMBERSHIP_WORDS = frozenset({"to", "from", "into", "onto"})
# A parameter ending in one of these names one record (``campaignArn``, ``job_name``, ``id``).
KEY_SUFFIXES = ("id", "arn", "name", "key", "uuid", "identifier", "slug", "code", "number")
_MAX_NOUN_WORDS = 4


def named_operation(name: str, tags: Iterable[str] = ()) -> tuple[Effect, str] | None:
    """(effect, entity name) that ``name`` says, or None.

    The verb is the name's first word, or its second when the first is one of the operation's tags
    (``repos_get_branch`` tagged ``repos``). A read of a plural noun is a list (``get_priorities``).
    """
    words = [w for w in snake_name(name).split("_") if w]
    tag_words = {snake_name(t) for t in tags}
    if len(words) > 2 and words[0] in tag_words and words[1] in NAME_VERBS:
        words = words[1:]
    if len(words) < 2 or words[0] not in NAME_VERBS:
        return None
    effect = NAME_VERBS[words[0]]
    noun = [w for w in words[1:] if w not in _FILLERS]
    cut = next((i for i, w in enumerate(noun) if w in _CUT_WORDS), len(noun))
    if effect in (Effect.CREATE, Effect.DELETE) and cut < len(noun) and noun[cut] in _MEMBERSHIP_WORDS:
        return None  # ``add_user_to_group``, ``remove_tag_from_resource``: a link changes, no record is made or gone
    noun = noun[:cut][-_MAX_NOUN_WORDS:]
    if not noun or not all(w.isalpha() for w in noun) or len(noun[-1]) < 3:
        return None
    if effect is Effect.READ and singular(noun[-1]) != noun[-1]:
        effect = Effect.LIST
    entity = entity_name("_".join(noun))
    return (effect, entity) if entity else None


def key_parameter(entity: str, parameters: Iterable[str], required: Iterable[str]) -> str | None:
    """The required parameter that names one ``entity`` record: ``<entity><suffix>`` (``campaignArn``,
    ``campaign_id``), else the entity's last words and a suffix (``JobDefinitionName`` for
    ``DataQualityJobDefinition``), longest first, else a bare suffix (``id``, ``name``); each only when
    one parameter matches."""
    words = [w for w in snake_name(entity).split("_") if w]
    needed = set(required)
    required = sorted(p for p in parameters if p in needed)
    for start in range(len(words)):
        noun = "".join(words[start:])
        for suffix in KEY_SUFFIXES:
            found = [p for p in required if compact_name(p) == noun + suffix]
            if len(found) == 1:
                return found[0]
    bare = [p for p in required if compact_name(p) in KEY_SUFFIXES]
    return bare[0] if len(bare) == 1 else None


def compact_name(text: str) -> str:
    """Lower-case letters and digits only: ``campaign-ARN`` and ``campaignArn`` compare equal."""
    return "".join(ch for ch in text.lower() if ch.isalnum())
