select quarantine_id, source_kind, location, reason
from {{ source('compoworld', 'quarantined_specs') }}
