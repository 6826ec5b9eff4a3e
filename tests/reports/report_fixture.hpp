// A hand-written trace of one eager rebalance, cut down from the two-consumers example: A owns
// orders-0..2, B joins at 3.121 s, A learns from its heartbeat at 6.048 s, revokes, both rejoin
// and get orders-0..1 and orders-2 at 6.054 s. Every report test reads this one trace.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace testing {

inline const char* kEagerTrace =
    R"({"t_us":0,"type":"run.start","scenario":"tiny","protocol":"classic-eager","seed":7,"duration_ms":10000}
{"t_us":0,"type":"topic.partitions","topic":"orders","partitions":3}
{"t_us":1000000,"type":"consumer.start","consumer":"A","group":"g","topics":["orders"],"protocol":"classic-eager"}
{"t_us":1001000,"type":"rpc","dir":"send","from":"A","to":"broker-0","api":"JoinGroup","id":1}
{"t_us":1002000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":0,"reason":"member A joined"}
{"t_us":1002000,"type":"group.state","group":"g","state":"CompletingRebalance","generation":1,"reason":"all members joined"}
{"t_us":1002000,"type":"group.epoch","group":"g","generation":1,"protocol":"range","leader":"A","members":["A"]}
{"t_us":1003000,"type":"rpc","dir":"recv","from":"broker-0","to":"A","api":"JoinGroup","id":1,"error":"NONE"}
{"t_us":1003000,"type":"rpc","dir":"send","from":"A","to":"broker-0","api":"SyncGroup","id":2}
{"t_us":1004000,"type":"group.state","group":"g","state":"Stable","generation":1,"reason":"leader's assignment persisted"}
{"t_us":1005000,"type":"rpc","dir":"recv","from":"broker-0","to":"A","api":"SyncGroup","id":2,"error":"NONE"}
{"t_us":1005000,"type":"assignment","consumer":"A","owned":["orders-0","orders-1","orders-2"]}
{"t_us":2000000,"type":"lag","group":"g","partition":"orders-0","lag":4,"log_end_offset":4,"offset":0,"owner":"A","reason":"sample"}
{"t_us":2000000,"type":"lag","group":"g","partition":"orders-1","lag":6,"log_end_offset":6,"offset":0,"owner":"A","reason":"sample"}
{"t_us":3121000,"type":"consumer.start","consumer":"B","group":"g","topics":["orders"],"protocol":"classic-eager"}
{"t_us":3123000,"type":"rpc","dir":"send","from":"B","to":"broker-0","api":"JoinGroup","id":1}
{"t_us":3126000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":1,"reason":"member B joined"}
{"t_us":6046000,"type":"rpc","dir":"send","from":"A","to":"broker-0","api":"Heartbeat","id":3}
{"t_us":6048000,"type":"rpc","dir":"recv","from":"broker-0","to":"A","api":"Heartbeat","id":3,"error":"REBALANCE_IN_PROGRESS"}
{"t_us":6048000,"type":"commit","consumer":"A","group":"g","phase":"sent","purpose":"before revocation","generation":1,"offsets":{}}
{"t_us":6050000,"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":["orders-0","orders-1","orders-2"],"phase":"start"}
{"t_us":6050000,"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":["orders-0","orders-1","orders-2"],"phase":"end"}
{"t_us":6050000,"type":"assignment","consumer":"A","owned":[]}
{"t_us":6050000,"type":"rpc","dir":"send","from":"A","to":"broker-0","api":"JoinGroup","id":4}
{"t_us":6051000,"type":"group.state","group":"g","state":"CompletingRebalance","generation":2,"reason":"all members joined"}
{"t_us":6051000,"type":"group.epoch","group":"g","generation":2,"protocol":"range","leader":"A","members":["A","B"]}
{"t_us":6052000,"type":"rpc","dir":"recv","from":"broker-0","to":"A","api":"JoinGroup","id":4,"error":"NONE"}
{"t_us":6052000,"type":"rpc","dir":"recv","from":"broker-0","to":"B","api":"JoinGroup","id":1,"error":"NONE"}
{"t_us":6052000,"type":"rpc","dir":"send","from":"A","to":"broker-0","api":"SyncGroup","id":5}
{"t_us":6052000,"type":"rpc","dir":"send","from":"B","to":"broker-0","api":"SyncGroup","id":2}
{"t_us":6053000,"type":"group.state","group":"g","state":"Stable","generation":2,"reason":"leader's assignment persisted"}
{"t_us":6054000,"type":"rpc","dir":"recv","from":"broker-0","to":"A","api":"SyncGroup","id":5,"error":"NONE"}
{"t_us":6054000,"type":"assignment","consumer":"A","owned":["orders-0","orders-1"]}
{"t_us":6054000,"type":"rpc","dir":"recv","from":"broker-0","to":"B","api":"SyncGroup","id":2,"error":"NONE"}
{"t_us":6054000,"type":"assignment","consumer":"B","owned":["orders-2"]}
{"t_us":7000000,"type":"lag","group":"g","partition":"orders-0","lag":1,"log_end_offset":5,"offset":4,"owner":"A","reason":"sample"}
{"t_us":7000000,"type":"lag","group":"g","partition":"orders-2","lag":2,"log_end_offset":2,"offset":0,"owner":"B","reason":"sample"}
{"t_us":8000000,"type":"consumer.crash","consumer":"B"}
{"t_us":10000000,"type":"run.end","events":40}
)";

inline nlohmann::ordered_json eager_summary() {
  return nlohmann::ordered_json::parse(R"({"scenario":"tiny","protocol":"classic-eager","seed":7,
    "rebalances":[
      {"group":"g","start_us":1002000,"end_us":1005000,"trigger":"member A joined","generation":1,"completed":true,
       "revoked":{},"assigned":{"A":["orders-0","orders-1","orders-2"]}},
      {"group":"g","start_us":3126000,"end_us":6054000,"trigger":"member B joined","generation":2,"completed":true,
       "revoked":{"A":["orders-0","orders-1","orders-2"]},"assigned":{"A":["orders-0","orders-1"],"B":["orders-2"]}}],
    "metrics":{"rebalance_count":2,"max_rebalance_ms":2928,"duplicates":0,"lost":0,"max_lag":6,
               "final_assignment":{"A":["orders-0","orders-1"]}}})");
}

}  // namespace testing
