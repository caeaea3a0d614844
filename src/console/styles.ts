/** The console's stylesheet, served as a file (the Content-Security-Policy allows no inline style). */
export const STYLES = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; background: #1d2330; color: #fff; }
header nav { display: flex; gap: 1rem; flex: 1; }
header a { color: #cfd8ea; text-decoration: none; }
header a.active { color: #fff; border-bottom: 2px solid #7aa7ff; }
header button { background: none; color: #cfd8ea; border: 1px solid #56607a; border-radius: 4px; padding: .2rem .6rem; }
#live.ok { color: #8fe0a0; } #live.down { color: #ff9d9d; }
#flash { padding: 0 1.2rem; } #flash.ok { background: #e3f6e8; padding: .5rem 1.2rem; } #flash.error { background: #fde6e6; padding: .5rem 1.2rem; color: #8a1111; }
main, #login { padding: .5rem 1.2rem 2rem; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.4rem; } h3 { font-size: 1rem; }
table { border-collapse: collapse; width: 100%; background: #fff; margin: .5rem 0; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e2e5ea; vertical-align: top; }
th { background: #eef0f4; font-weight: 600; }
table.counts { width: auto; }
td.error, pre.error { color: #8a1111; }
pre { background: #fff; border: 1px solid #e2e5ea; padding: .5rem; overflow: auto; max-height: 24rem; white-space: pre-wrap; word-break: break-all; }
.badge { padding: .05rem .4rem; border-radius: 3px; background: #e2e5ea; font-size: .85em; }
.badge.Unknown, .badge.open, .badge.hook-failed { background: #ffe2b3; }
.badge.Pending, .badge.waiting { background: #dfe9ff; }
.badge.Completed, .badge.replayed, .badge.filled, .badge.supplied { background: #d6f2dd; }
.badge.Failed, .badge.discarded, .badge.skipped { background: #f6d5d5; }
tr.highlight { background: #fff8d6; }
td.behind { color: #8a4b00; font-weight: 600; }
p.pager { display: flex; gap: 1.2rem; }
details.bulk { background: #fff; border: 1px solid #e2e5ea; border-radius: 6px; padding: .4rem 1rem; margin: .6rem 0; }
form.filters, form.settle, form.retry, .actions form { display: flex; flex-wrap: wrap; gap: .8rem; align-items: end; margin: .6rem 0; }
form label { display: flex; flex-direction: column; font-size: .85em; gap: .2rem; }
form.settle textarea { width: 28rem; font-family: monospace; }
input, select, textarea { font: inherit; padding: .25rem .4rem; border: 1px solid #b8bfcc; border-radius: 3px; }
button { font: inherit; padding: .3rem .9rem; border-radius: 4px; border: 1px solid #3b5bdb; background: #3b5bdb; color: #fff; cursor: pointer; }
button.danger { background: #c92a2a; border-color: #c92a2a; }
.card { background: #fff; border: 1px solid #e2e5ea; border-radius: 6px; padding: .2rem 1rem 1rem; margin: 1rem 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dt { color: #5b6477; } dd { margin: 0; }
.summary { color: #5b6477; }
figure.timeline { margin: .6rem 0 1.2rem; background: #fff; border: 1px solid #e2e5ea; border-radius: 6px; padding: .4rem; overflow-x: auto; }
svg.timeline { width: 100%; min-width: 900px; height: auto; display: block; font: 11px system-ui, sans-serif; }
svg.timeline text { fill: #1d2330; }
.tl-range { fill: #5b6477; }
.tl-tick { stroke: #e2e5ea; } .tl-tick-label { text-anchor: middle; fill: #5b6477; font-size: 10px; }
.tl-break rect, .tl-break-swatch { fill: #eef0f4; stroke: #b8bfcc; stroke-dasharray: 2 2; } .tl-break text { text-anchor: middle; font-size: 10px; fill: #5b6477; }
.tl-lane-bg { fill: #fff; } .tl-lane-bg.odd { fill: #f6f7f9; }
.tl-lane-label { font-weight: 600; font-size: 12px; } .tl-lane-line { stroke: #cfd4dc; }
.tl-event, .tl-agg circle { fill: #3b5bdb; stroke: #fff; stroke-width: 1; }
.tl-agg circle { fill: #1f3a9e; } svg .tl-agg text { fill: #fff; font-size: 9px; text-anchor: middle; font-weight: 600; }
.tl-bar { fill: #e2e5ea; stroke: #8a93a6; stroke-width: .6; }
.tl-bar.Completed { fill: #bfe8ca; stroke: #2f9e44; } .tl-bar.Pending { fill: #dfe9ff; stroke: #3b5bdb; }
.tl-bar.Unknown { fill: #ffe2b3; stroke: #e8590c; } .tl-bar.Failed { fill: #f6d5d5; stroke: #c92a2a; }
.tl-bar.open { stroke-dasharray: 3 2; }
.tl-hatch-bg { fill: #ffe2b3; } .tl-hatch-line { fill: #f59f00; } .tl-unknown { stroke: #e8590c; stroke-width: .6; }
svg .tl-bar-label { font-size: 8px; fill: #1d2330; pointer-events: none; }
.tl-attempt { stroke: #1d2330; stroke-width: 1.5; }
.tl-reconcile { fill: #c92a2a; } .tl-settle { fill: #7048e8; stroke: #fff; stroke-width: 1; }
.tl-bundle rect { fill: #cfd4dc; stroke: #8a93a6; } svg .tl-bundle text { font-size: 8px; text-anchor: middle; }
.tl-arrow { fill: none; stroke: #5b6477; stroke-width: 1.1; opacity: .8; } .tl-arrow.event { stroke: #0b7285; stroke-dasharray: 4 2; }
.tl-arrow.many { stroke-width: 2.2; } .tl-arrow.stub { opacity: .5; }
.tl-head path { fill: #5b6477; }
.tl-parked-bg { fill: #fff3bf; } .tl-parked-line { fill: #adb5bd; } .tl-parked { stroke: #868e96; stroke-width: .5; }
.tl-dead { stroke: #c92a2a; stroke-width: 2.2; fill: none; } svg .tl-dead-count { fill: #c92a2a; font-size: 9px; font-weight: 600; }
ul.tl-legend { list-style: none; display: flex; flex-wrap: wrap; gap: .3rem 1.1rem; padding: 0 .4rem; margin: .4rem 0 0; font-size: .85em; color: #5b6477; }
ul.tl-legend li { display: flex; align-items: center; gap: .3rem; } svg.tl-swatch { overflow: visible; }
details summary { cursor: pointer; font-family: monospace; font-size: .85em; color: #5b6477; }
`;
