select qualified_name, service_id, tool_name, domain, effect, entity, implementation, verdict,
       input_types, output_types
from {{ source('compoworld', 'tool_catalog') }}
