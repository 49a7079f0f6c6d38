// aqm_bench: the ns-3 peer of an aqmlab dumbbell scenario, for bench/vs_ns3.py.
//
// Builds the same dumbbell aqmlab builds (crates/sim/src/engine.rs): two routers
// `left` and `right` joined by the bottleneck, and for every flow its own sender
// and receiver node on access links.  TCP flows are BulkSend NewReno senders with
// aqmlab's defaults as far as ns-3 allows them; the UDP flow is a CBR OnOff source.
// The bottleneck's forward direction carries RedQueueDisc, FifoQueueDisc,
// FqCoDelQueueDisc (its defaults: 1024 queues, 10240 packets, quantum = the device's
// MTU of 1500 bytes, CoDel 5 ms / 100 ms with MinBytes 1500 per queue),
// CoDelQueueDisc (5 ms / 100 ms, MinBytes 1500) or PieQueueDisc (its defaults but
// derandomization on, as Linux); every other device queue is a 1000-packet DropTail
// (aqmlab's default DropTail), with no queue disc on top.  ns-3 gets its best settings: logging off, static routes,
// the strong end-system model (3.37 spells it WeakEsModel=false).
//
// Prints one JSON line: wall seconds, events executed, bottleneck packets in the
// measured window, aggregate TCP goodput, UDP goodput, Jain's index over the TCP
// flows; and over the measured window the bottleneck's utilization (busy time:
// bytes on the wire, PPP header included, over the rate), the packets that arrived
// at and were dropped by its queue disc, and the time-averaged number of packets in
// the queue disc and in the device queue below it.  Goodput counts delivered payload converted to on-the-wire packets of
// `--pkt-size` bytes (aqmlab's convention: delivered packets x packet size).
//
// Build: g++ -O3 -std=c++17 -I/usr/include aqm_bench.cc -o aqm_bench \
//   -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
//   -lns3-applications -lns3-traffic-control

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

uint64_t g_bottleneckTx = 0;
uint64_t g_bottleneckTxBytes = 0;

void
CountBottleneckTx(Ptr<const Packet> p)
{
    g_bottleneckTx++;
    g_bottleneckTxBytes += p->GetSize();
}

// The time integral of a packet count, from the moment it is started.
struct Occupancy
{
    bool on = false;
    uint32_t n = 0;
    double since = 0; // seconds
    double area = 0;  // packet-seconds

    void Update(double now, uint32_t next)
    {
        if (on)
        {
            area += n * (now - since);
        }
        since = now;
        n = next;
    }
};

Occupancy g_qdiscOcc;
Occupancy g_deviceOcc;

// TCP senders' retransmission timeouts and fast recoveries in the measured
// window: entries into CA_LOSS and CA_RECOVERY.
bool g_counting = false;
uint64_t g_timeouts = 0;
uint64_t g_recoveries = 0;

void
CongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t next)
{
    if (!g_counting)
    {
        return;
    }
    g_timeouts += next == TcpSocketState::CA_LOSS;
    g_recoveries += next == TcpSocketState::CA_RECOVERY;
}

// Every flow has its socket once the applications have started.
void
WatchSockets()
{
    Config::ConnectWithoutContext("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                                  MakeCallback(&CongState));
}

void
QdiscLen(uint32_t, uint32_t next)
{
    g_qdiscOcc.Update(Simulator::Now().GetSeconds(), next);
}

void
DeviceLen(uint32_t, uint32_t next)
{
    g_deviceOcc.Update(Simulator::Now().GetSeconds(), next);
}

// `--traceFlow i`: a line on stderr for every change of flow i's congestion window,
// slow-start threshold and congestion state, and for every bottleneck drop of its
// packets (FqCoDel's per-flow CoDel drops reach the root's DropAfterDequeue).
int32_t g_traceFlow = -1;
Ipv4Address g_traceSrc;

bool
IsTraced(Ptr<const QueueDiscItem> item)
{
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    return ip && ip->GetHeader().GetSource() == g_traceSrc;
}

void
TraceDrop(Ptr<const QueueDiscItem> item, const char* reason)
{
    if (IsTraced(item))
    {
        std::fprintf(stderr, "T %.6f drop %s\n", Simulator::Now().GetSeconds(), reason);
    }
}

void
TraceCwnd(uint32_t, uint32_t next)
{
    std::fprintf(stderr, "T %.6f cwnd %u\n", Simulator::Now().GetSeconds(), next);
}

void
TraceSsthresh(uint32_t, uint32_t next)
{
    std::fprintf(stderr, "T %.6f ssthresh %u\n", Simulator::Now().GetSeconds(), next);
}

void
TraceInFlight(uint32_t, uint32_t next)
{
    std::fprintf(stderr, "T %.6f inflight %u\n", Simulator::Now().GetSeconds(), next);
}

void
TraceState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t next)
{
    std::fprintf(stderr,
                 "T %.6f state %s\n",
                 Simulator::Now().GetSeconds(),
                 TcpSocketState::TcpCongStateName[next]);
}

void
WatchTracedSocket(uint32_t node)
{
    std::string base =
        "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/";
    Config::ConnectWithoutContext(base + "CongestionWindow", MakeCallback(&TraceCwnd));
    Config::ConnectWithoutContext(base + "SlowStartThreshold", MakeCallback(&TraceSsthresh));
    Config::ConnectWithoutContext(base + "BytesInFlight", MakeCallback(&TraceInFlight));
    Config::ConnectWithoutContext(base + "CongState", MakeCallback(&TraceState));
}

struct Snapshot
{
    std::vector<uint64_t> rx;
    uint64_t bottleneck = 0;
    uint64_t bottleneckBytes = 0;
    uint64_t qdiscArrivals = 0;
    uint64_t qdiscDrops = 0;
};

void
TakeSnapshot(Snapshot* s, std::vector<Ptr<PacketSink>>* sinks, Ptr<QueueDisc> q)
{
    s->rx.clear();
    for (auto& k : *sinks)
    {
        s->rx.push_back(k->GetTotalRx());
    }
    s->bottleneck = g_bottleneckTx;
    s->bottleneckBytes = g_bottleneckTxBytes;
    const QueueDisc::Stats& st = q->GetStats();
    s->qdiscArrivals = st.nTotalReceivedPackets;
    s->qdiscDrops = st.nTotalDroppedPackets;
}

// The measured window starts: the occupancy integrals start from here.
void
StartWindow(Snapshot* s, std::vector<Ptr<PacketSink>>* sinks, Ptr<QueueDisc> q)
{
    TakeSnapshot(s, sinks, q);
    double now = Simulator::Now().GetSeconds();
    g_qdiscOcc.Update(now, g_qdiscOcc.n);
    g_qdiscOcc.on = true;
    g_deviceOcc.Update(now, g_deviceOcc.n);
    g_deviceOcc.on = true;
    g_counting = true;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t nTcp = 32;
    std::string udpRate = "2Mbps"; // "0" for no UDP flow
    std::string bnRate = "1Mbps";
    std::string bnDelay = "1ms";
    std::string accessRate = "10Mbps";
    std::string accessDelay = "1ms";
    std::string queue = "red"; // red | fifo | fq_codel | codel | pie
    uint32_t limit = 300;
    double minTh = 100;
    double maxTh = 200;
    double wQ = 0.002;
    double maxP = 0.1;
    uint32_t meanPktSize = 1000;
    double duration = 100;
    double warmup = 20;
    uint32_t seed = 1;
    uint32_t pktSize = 1000;
    uint32_t maxWindow = 131; // packets
    uint32_t accessQueue = 1000;
    double startSpread = 1.0;
    std::string minRto = "200ms"; // aqmlab's min_rto default (ns-2's)

    CommandLine cmd(__FILE__);
    cmd.AddValue("tcp", "number of TCP flows", nTcp);
    cmd.AddValue("udpRate", "rate of the one CBR UDP flow (0: none)", udpRate);
    cmd.AddValue("bnRate", "bottleneck rate", bnRate);
    cmd.AddValue("bnDelay", "bottleneck delay", bnDelay);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("accessDelay", "access link delay", accessDelay);
    cmd.AddValue("queue", "bottleneck queue disc: red | fifo | fq_codel | codel | pie", queue);
    cmd.AddValue("limit", "bottleneck queue limit, packets", limit);
    cmd.AddValue("minTh", "RED min_th, packets", minTh);
    cmd.AddValue("maxTh", "RED max_th, packets", maxTh);
    cmd.AddValue("wq", "RED w_q", wQ);
    cmd.AddValue("maxP", "RED max_p", maxP);
    cmd.AddValue("meanPktSize", "RED mean packet size, bytes", meanPktSize);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds discarded from the measurement", warmup);
    cmd.AddValue("seed", "run seed", seed);
    cmd.AddValue("pktSize", "IP packet size of data packets, bytes", pktSize);
    cmd.AddValue("maxWindow", "receiver window, packets", maxWindow);
    cmd.AddValue("accessQueue", "DropTail limit of every other device, packets", accessQueue);
    cmd.AddValue("startSpread", "flows start uniformly in [0, startSpread) s", startSpread);
    cmd.AddValue("minRto", "TCP's minimum retransmission timeout", minRto);
    cmd.AddValue("traceFlow", "trace this TCP flow on stderr (-1: none)", g_traceFlow);
    cmd.Parse(argc, argv);

    auto wallStart = std::chrono::steady_clock::now();
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);

    const uint32_t segSize = pktSize - 40; // 20 IP + 20 TCP, no options
    const uint32_t udpPayload = pktSize - 28;

    // TCP: aqmlab's NewReno (crates/sim/src/tcp.rs) as closely as ns-3 allows.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    // aqmlab's max_window caps what is in flight, whatever the receiver holds out of
    // order.  In ns-3 the send buffer (BulkSend keeps it full, acked data leaves it)
    // does the same; the receive buffer is made large enough never to bind.  (With
    // the receive buffer as the cap, ns-3.37 segfaults in TcpRateLinux::SkbSent as
    // soon as the window closes under loss: seen with RcvBufSize < SndBufSize.)
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(maxWindow * segSize));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 * maxWindow * segSize));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(minRto)));
    // aqmlab's flows never give up and start without a handshake: ns-3's sockets
    // close after 6 timeouts of one segment (DataRetries) and retry a lost SYN after
    // 3 s at most 6 times (ConnTimeout, ConnCount).  Under the heavy loss of
    // experiment (a) that kills or delays flows, so raise the limits and use
    // aqmlab's initial RTO for the SYN.
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(1000000));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    // Routers: the strong end-system model (ns-3.37's name for it).
    Config::SetDefault("ns3::Ipv4::WeakEsModel", BooleanValue(false));

    // RED as aqmlab's (crates/aqm/src/red.rs): ns-2's estimator, wait, not gentle.
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(minTh));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(maxTh));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(wQ));
    Config::SetDefault("ns3::RedQueueDisc::LInterm", DoubleValue(1.0 / maxP));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(meanPktSize));
    Config::SetDefault("ns3::RedQueueDisc::IdlePktSize", UintegerValue(meanPktSize));
    Config::SetDefault("ns3::RedQueueDisc::Wait", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::LinkBandwidth", DataRateValue(DataRate(bnRate)));
    Config::SetDefault("ns3::RedQueueDisc::LinkDelay", TimeValue(Time(bnDelay)));

    const bool hasUdp = udpRate != "0" && DataRate(udpRate).GetBitRate() > 0;
    const uint32_t nFlows = nTcp + (hasUdp ? 1 : 0);

    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(nFlows);
    NodeContainer receivers;
    receivers.Create(nFlows);

    InternetStackHelper stack;
    stack.SetRoutingHelper(Ipv4StaticRoutingHelper());
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(std::to_string(accessQueue) + "p")));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(bnRate));
    bottleneck.SetChannelAttribute("Delay", StringValue(bnDelay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(std::to_string(accessQueue) + "p")));

    NetDeviceContainer bnDevs = bottleneck.Install(routers.Get(0), routers.Get(1));
    // The forward device keeps one packet below the queue disc, so the queue disc
    // (like aqmlab's qdisc) holds the backlog.
    bnDevs.Get(0)->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(QueueSize("1p"));

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    Ipv4InterfaceContainer bnIf = addr.Assign(bnDevs);

    // Sender access links in 10.1/16, receiver access links in 10.2/16, so each
    // router needs one aggregate route towards the other side.
    std::vector<Ipv4InterfaceContainer> sIf(nFlows), rIf(nFlows);
    NetDeviceContainer accessDevs;
    Ipv4AddressHelper sAddr("10.1.0.0", "255.255.255.252");
    Ipv4AddressHelper rAddr("10.2.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < nFlows; i++)
    {
        NetDeviceContainer s = access.Install(senders.Get(i), routers.Get(0));
        NetDeviceContainer r = access.Install(routers.Get(1), receivers.Get(i));
        sIf[i] = sAddr.Assign(s);
        sAddr.NewNetwork();
        rIf[i] = rAddr.Assign(r);
        rAddr.NewNetwork();
        accessDevs.Add(s);
        accessDevs.Add(r);
    }

    // No queue disc anywhere but the bottleneck's forward direction.
    TrafficControlHelper none;
    none.Uninstall(accessDevs);
    none.Uninstall(bnDevs);
    TrafficControlHelper tch;
    std::string lim = std::to_string(limit) + "p";
    if (queue == "red")
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", QueueSizeValue(QueueSize(lim)));
    }
    else if (queue == "fifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(lim)));
    }
    else if (queue == "fq_codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", QueueSizeValue(QueueSize(lim)));
    }
    else if (queue == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", QueueSizeValue(QueueSize(lim)));
    }
    else if (queue == "pie")
    {
        // Linux's PIE always derandomizes (aqmlab's default); ns-3's default is off.
        tch.SetRootQueueDisc("ns3::PieQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(lim)),
                             "UseDerandomization",
                             BooleanValue(true));
    }
    else
    {
        std::fprintf(stderr,
                     "queue must be red, fifo, fq_codel, codel or pie, not %s\n",
                     queue.c_str());
        return 2;
    }
    QueueDiscContainer qdiscs = tch.Install(bnDevs.Get(0));

    // Static routes.
    Ipv4StaticRoutingHelper srh;
    Ptr<Ipv4StaticRouting> left = srh.GetStaticRouting(routers.Get(0)->GetObject<Ipv4>());
    Ptr<Ipv4StaticRouting> right = srh.GetStaticRouting(routers.Get(1)->GetObject<Ipv4>());
    left->AddNetworkRouteTo(Ipv4Address("10.2.0.0"),
                            Ipv4Mask("255.255.0.0"),
                            bnIf.GetAddress(1),
                            1);
    right->AddNetworkRouteTo(Ipv4Address("10.1.0.0"),
                             Ipv4Mask("255.255.0.0"),
                             bnIf.GetAddress(0),
                             1);
    for (uint32_t i = 0; i < nFlows; i++)
    {
        srh.GetStaticRouting(senders.Get(i)->GetObject<Ipv4>())
            ->SetDefaultRoute(sIf[i].GetAddress(1), 1);
        srh.GetStaticRouting(receivers.Get(i)->GetObject<Ipv4>())
            ->SetDefaultRoute(rIf[i].GetAddress(0), 1);
    }

    bnDevs.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&CountBottleneckTx));
    Ptr<QueueDisc> qdisc = qdiscs.Get(0);
    qdisc->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&QdiscLen));
    bnDevs.Get(0)->GetObject<PointToPointNetDevice>()->GetQueue()->TraceConnectWithoutContext(
        "PacketsInQueue",
        MakeCallback(&DeviceLen));

    if (g_traceFlow >= 0 && uint32_t(g_traceFlow) < nTcp)
    {
        g_traceSrc = sIf[g_traceFlow].GetAddress(0);
        qdisc->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&TraceDrop));
        Simulator::Schedule(Seconds(startSpread),
                            &WatchTracedSocket,
                            senders.Get(g_traceFlow)->GetId());
    }

    // Applications: flows start uniformly in [0, startSpread).
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetStream(1);
    std::vector<Ptr<PacketSink>> sinks;
    const uint16_t port = 5000;
    for (uint32_t i = 0; i < nFlows; i++)
    {
        bool isUdp = hasUdp && i == nTcp;
        Address dst(InetSocketAddress(rIf[i].GetAddress(1), port));
        std::string proto = isUdp ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
        PacketSinkHelper sinkHelper(proto, InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
        ApplicationContainer app;
        if (isUdp)
        {
            OnOffHelper onoff(proto, dst);
            onoff.SetConstantRate(DataRate(udpRate), udpPayload);
            app = onoff.Install(senders.Get(i));
        }
        else
        {
            BulkSendHelper bulk(proto, dst);
            bulk.SetAttribute("SendSize", UintegerValue(segSize));
            bulk.SetAttribute("MaxBytes", UintegerValue(0));
            app = bulk.Install(senders.Get(i));
        }
        app.Start(Seconds(startRv->GetValue(0.0, startSpread)));
    }

    Snapshot atWarmup;
    Simulator::Schedule(Seconds(warmup), &StartWindow, &atWarmup, &sinks, qdisc);
    Simulator::Schedule(Seconds(std::min(startSpread, warmup)), &WatchSockets);
    Simulator::Stop(Seconds(duration));
    auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    auto wallEnd = std::chrono::steady_clock::now();
    Snapshot atEnd;
    TakeSnapshot(&atEnd, &sinks, qdisc);
    g_qdiscOcc.Update(duration, g_qdiscOcc.n);
    g_deviceOcc.Update(duration, g_deviceOcc.n);
    uint64_t events = Simulator::GetEventCount();

    const double secs = duration - warmup;
    double tcpSum = 0, tcpSq = 0, udpBps = 0;
    for (uint32_t i = 0; i < nFlows; i++)
    {
        bool isUdp = hasUdp && i == nTcp;
        double payload = double(atEnd.rx[i] - atWarmup.rx[i]);
        double perPkt = isUdp ? udpPayload : segSize;
        double bps = payload / perPkt * pktSize * 8.0 / secs;
        if (isUdp)
        {
            udpBps = bps;
        }
        else
        {
            tcpSum += bps;
            tcpSq += bps * bps;
        }
    }
    double jain = tcpSq > 0 ? tcpSum * tcpSum / (nTcp * tcpSq) : 1.0;
    const QueueDisc::Stats& st = qdisc->GetStats();
    // ns-3's point-to-point device adds a 2-byte PPP header to every packet.
    const double utilization = double(atEnd.bottleneckBytes - atWarmup.bottleneckBytes) * 8.0 /
                               (double(DataRate(bnRate).GetBitRate()) * secs);
    double wall = std::chrono::duration<double>(wallEnd - wallStart).count();
    double runWall = std::chrono::duration<double>(wallEnd - runStart).count();
    std::printf("{\"simulator\":\"ns-3.37\",\"wall_seconds\":%.6f,\"run_wall_seconds\":%.6f,"
                "\"events\":%llu,\"sim_seconds\":%.3f,\"bottleneck_packets\":%llu,"
                "\"bottleneck_packets_total\":%llu,\"tcp_goodput_bps\":%.1f,"
                "\"udp_goodput_bps\":%.1f,\"jain\":%.6f,\"qdisc_drops\":%u,"
                "\"qdisc_dequeued\":%u,\"flows\":%u,\"utilization\":%.6f,"
                "\"qdisc_arrivals_window\":%llu,\"qdisc_drops_window\":%llu,"
                "\"mean_queue_qdisc\":%.4f,\"mean_queue_device\":%.4f,"
                "\"tcp_timeouts\":%llu,\"tcp_fast_recoveries\":%llu}\n",
                wall,
                runWall,
                (unsigned long long)events,
                duration,
                (unsigned long long)(atEnd.bottleneck - atWarmup.bottleneck),
                (unsigned long long)atEnd.bottleneck,
                tcpSum,
                udpBps,
                jain,
                st.nTotalDroppedPackets,
                st.nTotalDequeuedPackets,
                nFlows,
                utilization,
                (unsigned long long)(atEnd.qdiscArrivals - atWarmup.qdiscArrivals),
                (unsigned long long)(atEnd.qdiscDrops - atWarmup.qdiscDrops),
                g_qdiscOcc.area / secs,
                g_deviceOcc.area / secs,
                (unsigned long long)g_timeouts,
                (unsigned long long)g_recoveries);
    Simulator::Destroy();
    return 0;
}
