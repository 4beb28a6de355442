select service_id, name, domain, version, source_kind, source_location, n_entities, n_tools, spec_hash
from {{ source('compoworld', 'service_specs') }}
