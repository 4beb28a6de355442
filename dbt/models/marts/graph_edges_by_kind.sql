-- Dependency graph edges by kind (type: data flow, state: shared entity), and how many cross services.
select
    e.kind,
    count(*) as n_edges,
    count(*) filter (where e.cross_service) as n_cross_service,
    round(count(*) filter (where e.cross_service) / count(*), 4) as cross_service_share,
    round(count(*) / sum(count(*)) over (), 4) as share_of_edges
from {{ ref('stg_dependency_graph') }} as e
group by e.kind
order by e.kind
