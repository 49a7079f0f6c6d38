// -*- c-basic-offset: 4; indent-tabs-mode: nil -*-
// htsim_fat_tree: Days's benchmark E5 in htsim, built to mirror aqmlab's
// `kind = "fat_tree"` scenario (bench/fat_tree.py): a k-ary fat tree (k^3/4
// hosts, k/2 edge and k/2 aggregation switches per pod, (k/2)^2 core
// switches), every link both ways a DropTail Queue at the link rate and a Pipe
// of the link delay, one TCP flow of a fixed size per host to the host k^3/8
// on (so every flow crosses the core), each flow's path (and its ACKs' path)
// chosen uniformly among the equal-cost ones, as ECMP's hash spreads flows.
//
// Uses only htsim's library (libhtsim.a) and its public API and fields; nothing
// in the htsim checkout is changed. The run loop counts htsim events (one per
// EventList::doNextEvent() call) and times itself; one `SUMMARY {json}` line.
//
// Options (defaults in brackets):
//   -k N            the fat tree's arity, even [16]
//   -rate_gbps X    every link [100]         -delay_us X   every link [1]
//   -qpkts N        every port's DropTail limit, packets waiting [200]
//   -pkt N          data packet size on the wire, bytes [1500]
//   -flow_pkts N    each flow's size, data packets [719]
//   -maxwnd N       max window, packets [131]
//   -cwnd0 N        TcpSrc's initial _cwnd, packets (the SYN's ACK adds one) [1]
//   -scan_ms X      TcpRtxTimerScanner period [10]
//   -dur_s X        simulated seconds [5]    -seed N  [1]
#include "config.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>
#include "network.h"
#include "pipe.h"
#include "eventlist.h"
#include "queue.h"
#include "tcp.h"
#include "harness.h"

// One direction of a link: its egress queue and its propagation delay.
struct Hop {
    Queue* queue;
    Pipe* pipe;
};

int main(int argc, char** argv) {
    int k = 16, qpkts = 200, pkt = 1500, flow_pkts = 719, maxwnd = 131, cwnd0 = 1;
    double rate_gbps = 100, delay_us = 1, scan_ms = 10, dur = 5;
    unsigned seed = 1;
    Options args(argc, argv);
    while (args.more()) {
        const std::string& a = args.option();
        if (a == "-k") k = atoi(args.value());
        else if (a == "-rate_gbps") rate_gbps = atof(args.value());
        else if (a == "-delay_us") delay_us = atof(args.value());
        else if (a == "-qpkts") qpkts = atoi(args.value());
        else if (a == "-pkt") pkt = atoi(args.value());
        else if (a == "-flow_pkts") flow_pkts = atoi(args.value());
        else if (a == "-maxwnd") maxwnd = atoi(args.value());
        else if (a == "-cwnd0") cwnd0 = atoi(args.value());
        else if (a == "-scan_ms") scan_ms = atof(args.value());
        else if (a == "-dur_s") dur = atof(args.value());
        else if (a == "-seed") seed = atoi(args.value());
        else return args.unknown();
    }
    if (k < 2 || k % 2) { std::cerr << "-k must be even and at least 2" << std::endl; return 2; }

    Stopwatch setup;
    srand(seed);  // htsim's rng.cpp: mt19937 behind rand()/drand()
    Packet::set_packet_size(pkt);
    EventList eventlist;
    eventlist.setEndtime(timeFromSec(dur));

    const int half = k / 2, hosts = k * k * k / 4, per_pod = k * k / 4;
    const linkspeed_bps rate = (linkspeed_bps)(rate_gbps * 1e9);
    const mem_b limit = (mem_b)(qpkts + 1) * pkt;  // htsim counts the packet in service
    auto hop = [&]() {
        return Hop{new Queue(rate, limit, eventlist, NULL), new Pipe(timeFromUs(delay_us), eventlist)};
    };
    // Up and down hops: host-edge per host; edge-aggregation per pod, edge and
    // aggregation switch; aggregation-core per pod, aggregation switch and core
    // in its group.
    std::vector<Hop> host_up(hosts), host_down(hosts);
    std::vector<Hop> edge_up(k * half * half), edge_down(k * half * half);
    std::vector<Hop> agg_up(k * half * half), agg_down(k * half * half);
    for (auto* v : {&host_up, &host_down, &edge_up, &edge_down, &agg_up, &agg_down})
        for (auto& h : *v) h = hop();
    auto pod = [&](int h) { return h / per_pod; };
    auto edge = [&](int h) { return (h % per_pod) / half; };
    auto add = [](Route* r, const Hop& h) { r->push_back(h.queue); r->push_back(h.pipe); };

    // A path from host s to host d: through the core when they are in
    // different pods, an aggregation switch when behind different edges of one
    // pod; the switches uniformly at random among the equal-cost ones.
    auto path = [&](int s, int d) {
        Route* r = new Route();
        add(r, host_up[s]);
        int ps = pod(s), pd = pod(d), es = edge(s), ed = edge(d);
        if (ps != pd || es != ed) {
            int a = rand() % half;
            add(r, edge_up[(ps * half + es) * half + a]);
            if (ps != pd) {
                int c = rand() % half;
                add(r, agg_up[(ps * half + a) * half + c]);
                add(r, agg_down[(pd * half + a) * half + c]);
            }
            add(r, edge_down[(pd * half + ed) * half + a]);
        }
        add(r, host_down[d]);
        return r;
    };

    TcpRtxTimerScanner* scanner = new TcpRtxTimerScanner(timeFromMs(scan_ms), eventlist);
    std::vector<TcpSrc*> srcs;
    std::vector<TcpSink*> sinks;
    for (int s = 0; s < hosts; s++) {
        int d = (s + hosts / 2) % hosts;
        TcpSrc* src = new TcpSrc(NULL, NULL, eventlist);
        TcpSink* snk = new TcpSink();
        src->_maxcwnd = (uint32_t)maxwnd * pkt;
        src->set_cwnd((uint64_t)cwnd0 * pkt);
        src->set_ssthresh(0xffffffffu);
        src->set_flowsize((uint64_t)flow_pkts * pkt);
        scanner->registerTcp(*src);
        Route* out = path(s, d);
        out->push_back(snk);
        Route* back = path(d, s);
        back->push_back(src);
        src->connect(*out, *back, *snk, 0);
        srcs.push_back(src);
        sinks.push_back(snk);
    }

    double setup_wall = setup.wall(), setup_cpu = setup.cpu();
    Loop loop = run_to_end(eventlist);
    uint64_t events = loop.events;
    double loop_wall = loop.wall, loop_cpu = loop.cpu;

    uint64_t delivered = 0, finished = 0, drops = 0;
    for (int i = 0; i < hosts; i++) {
        // htsim's flow size counts one packet more than asked (its SYN's).
        uint64_t pkts = std::min<uint64_t>(sinks[i]->_cumulative_ack / pkt, flow_pkts);
        delivered += pkts;
        if (pkts >= (uint64_t)flow_pkts) finished++;
        drops += srcs[i]->_drops;
    }
    std::cout.flush();
    printf("SUMMARY {\"events\": %llu, \"loop_wall_s\": %.6f, \"loop_cpu_s\": %.6f, "
           "\"setup_wall_s\": %.6f, \"setup_cpu_s\": %.6f, \"tcp_delivered_pkts\": %llu, "
           "\"flows\": %d, \"finished\": %llu, \"fast_recoveries\": %llu}\n",
           (unsigned long long)events, loop_wall, loop_cpu, setup_wall, setup_cpu,
           (unsigned long long)delivered, hosts, (unsigned long long)finished,
           (unsigned long long)drops);
    fflush(stdout);
    return 0;
}
