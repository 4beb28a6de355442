-- Specs in → services built → tools → verified tools (later stages extend this funnel).
select 'specs_imported' as stage, 1 as stage_order, count(*) as n from {{ ref('stg_service_specs') }}
union all
select 'specs_quarantined', 2, count(*) from {{ ref('stg_quarantined_specs') }}
union all
select 'services_built', 3, count(*) from {{ ref('stg_services') }}
union all
select 'tools', 4, count(*) from {{ ref('stg_tool_catalog') }}
union all
select 'tools_verified', 5, count(*) from {{ ref('stg_tool_catalog') }} where verdict = 'verified'
order by stage_order
