select qualified_name, service_id, tool, domain, effect, entity, changes_state, code, walkable, in_degree, out_degree
from {{ source('compoworld', 'dependency_graph_nodes') }}
