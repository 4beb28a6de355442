-- Per service: its tools, and the graph edges leaving and entering it (within and across services).
with outgoing as (
    select source_service as service_id, count(*) as out_edges,
           count(*) filter (where cross_service) as cross_out_edges
    from {{ ref('stg_dependency_graph') }}
    group by source_service
),
incoming as (
    select target_service as service_id, count(*) as in_edges,
           count(*) filter (where cross_service) as cross_in_edges
    from {{ ref('stg_dependency_graph') }}
    group by target_service
),
tools as (
    select service_id, any_value(domain) as domain, count(*) as n_tools
    from {{ ref('stg_dependency_graph_nodes') }}
    group by service_id
)
select
    t.service_id,
    t.domain,
    t.n_tools,
    coalesce(o.out_edges, 0) as out_edges,
    coalesce(i.in_edges, 0) as in_edges,
    coalesce(o.cross_out_edges, 0) as cross_out_edges,
    coalesce(i.cross_in_edges, 0) as cross_in_edges,
    count(distinct e.target_service) filter (where e.cross_service) as n_services_fed
from tools as t
left join outgoing as o on o.service_id = t.service_id
left join incoming as i on i.service_id = t.service_id
left join {{ ref('stg_dependency_graph') }} as e on e.source_service = t.service_id
group by all
order by t.service_id
