"""Entity fields from the updates that name none of them.

An entity's fields come from the schema a read returns or a component named after it, while its
update (``PUT /outputs/{outputArn}``, ``UpdateVocabularyFilter``) takes the fields the API lets a caller
change, often under other names or from a schema the importer did not pick. Such an update writes
nothing: generated code stores only the parameters that are fields of the record, so the call would
succeed and change no state. :func:`with_update_fields` gives the record the fields such an update
writes (optional, typed from the parameters; not the key, transport options or names that are no
identifiers), so the update changes what it says, a read then sees it, and the CRUD tools' returns
show it.
"""

from __future__ import annotations

from pydantic import ValidationError

from compoworld_assets.engine.specs.importers.crud_returns import crud_returns
from compoworld_assets.engine.specs.model import Effect, EntitySpec, FieldSpec, ServiceSpec
from compoworld_assets.engine.specs.transitions import parameter_fields


def with_update_fields(spec: ServiceSpec) -> ServiceSpec:
    """``spec`` with the fields its field-less updates write added to their entities (see module doc);
    ``spec`` itself when no update is field-less or the widened spec does not validate."""
    entities = {e.name: e for e in spec.entities}
    added: dict[str, list[FieldSpec]] = {}
    for tool in spec.tools:
        entity = entities.get(tool.entity or "")
        if tool.effect is not Effect.UPDATE or tool.sets or entity is None:
            continue
        key = spec.key_parameter(tool)
        written = {name: schema for name, schema in tool.parameter_properties().items() if name != key}
        if any(entity.field(name) is not None for name in written):
            continue
        known = {f.name for f in added.get(entity.name, [])}
        added.setdefault(entity.name, []).extend(
            f for f in parameter_fields(entity, written, set()) if f.name not in known)
    added = {name: fields for name, fields in added.items() if fields}
    if not added:
        return spec
    widened = {name: _widened(entities[name], fields) for name, fields in added.items()}
    tools = []
    for tool in spec.tools:
        old = entities.get(tool.entity or "")
        if tool.entity in widened and tool.returns == crud_returns(tool.effect, old, spec.id):
            tool = tool.model_copy(update={"returns": crud_returns(tool.effect, widened[tool.entity], spec.id)})
        tools.append(tool)
    try:
        return ServiceSpec.model_validate({
            **spec.model_dump(), "entities": [widened.get(e.name, e).model_dump() for e in spec.entities],
            "tools": [t.model_dump() for t in tools]})
    except ValidationError:
        return spec


def _widened(entity: EntitySpec, fields: list[FieldSpec]) -> EntitySpec:
    return entity.model_copy(update={"fields": [*entity.fields, *fields]})
