-- Tools per domain and service, and how they are implemented.
select
    c.domain,
    c.service_id,
    count(*) as n_tools,
    count(*) filter (where c.verdict = 'verified') as n_verified,
    count(*) filter (where c.implementation = 'world_model') as n_world_model,
    round(count(*) filter (where c.verdict = 'verified') / count(*), 4) as verified_share
from {{ ref('stg_tool_catalog') }} as c
group by c.domain, c.service_id
order by c.domain, c.service_id
