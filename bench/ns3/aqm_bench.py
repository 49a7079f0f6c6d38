"""aqm_bench.py: the same dumbbell as aqm_bench.cc, through ns-3's Python bindings.

The PyPI wheel (`pip install ns3`, ns-3.44, cppyy bindings) runs the C++ simulator
core; Python only builds the topology, so this measures the wheel's build of ns-3
(its compiler flags and its cppyy start-up), not Python in the event loop.  Same
arguments and the same one-line JSON as the C++ program; the differences are
3.44's spelling of the strong end-system model and the bottleneck count, read from
the queue disc's statistics (no Python trace callback in the hot path).
"""

import argparse
import json
import time

t0 = time.perf_counter()
from ns import ns  # noqa: E402  (import time is part of what the wheel costs)


def main():
    p = argparse.ArgumentParser()
    a = p.add_argument
    a("--tcp", type=int, default=32)
    a("--udpRate", default="2Mbps")
    a("--bnRate", default="1Mbps")
    a("--bnDelay", default="1ms")
    a("--accessRate", default="10Mbps")
    a("--accessDelay", default="1ms")
    a("--queue", default="red")
    a("--limit", type=int, default=300)
    a("--minTh", type=float, default=100)
    a("--maxTh", type=float, default=200)
    a("--wq", type=float, default=0.002)
    a("--maxP", type=float, default=0.1)
    a("--meanPktSize", type=int, default=1000)
    a("--duration", type=float, default=100)
    a("--warmup", type=float, default=20)
    a("--seed", type=int, default=1)
    a("--pktSize", type=int, default=1000)
    a("--maxWindow", type=int, default=131)
    a("--accessQueue", type=int, default=1000)
    a("--startSpread", type=float, default=1.0)
    o = p.parse_args()

    ns.RngSeedManager.SetSeed(o.seed)
    ns.RngSeedManager.SetRun(1)
    seg = o.pktSize - 40
    udp_payload = o.pktSize - 28
    D = ns.Config.SetDefault
    D("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    D("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    D("ns3::TcpSocket::SegmentSize", ns.UintegerValue(seg))
    D("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(1))
    D("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    # The send buffer caps the window, as in aqm_bench.cc (see there why).
    D("ns3::TcpSocket::SndBufSize", ns.UintegerValue(o.maxWindow * seg))
    D("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 * o.maxWindow * seg))
    D("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    D("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000000))
    D("ns3::TcpSocket::ConnCount", ns.UintegerValue(1000000))
    D("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1)))
    D("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    D("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    D("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    D("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    D("ns3::Ipv4::StrongEndSystemModel", ns.BooleanValue(True))
    D("ns3::RedQueueDisc::MinTh", ns.DoubleValue(o.minTh))
    D("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(o.maxTh))
    D("ns3::RedQueueDisc::QW", ns.DoubleValue(o.wq))
    D("ns3::RedQueueDisc::LInterm", ns.DoubleValue(1.0 / o.maxP))
    D("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(o.meanPktSize))
    D("ns3::RedQueueDisc::IdlePktSize", ns.UintegerValue(o.meanPktSize))
    D("ns3::RedQueueDisc::Wait", ns.BooleanValue(True))
    D("ns3::RedQueueDisc::Gentle", ns.BooleanValue(False))
    D("ns3::RedQueueDisc::LinkBandwidth", ns.DataRateValue(ns.DataRate(o.bnRate)))
    D("ns3::RedQueueDisc::LinkDelay", ns.TimeValue(ns.Time(o.bnDelay)))

    has_udp = o.udpRate != "0"
    n = o.tcp + (1 if has_udp else 0)
    routers = ns.NodeContainer()
    routers.Create(2)
    senders = ns.NodeContainer()
    senders.Create(n)
    receivers = ns.NodeContainer()
    receivers.Create(n)
    stack = ns.InternetStackHelper()
    stack.SetRoutingHelper(ns.Ipv4StaticRoutingHelper())
    for c in (routers, senders, receivers):
        stack.Install(c)

    qsize = ns.QueueSizeValue(ns.QueueSize(f"{o.accessQueue}p"))
    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue(o.accessRate))
    access.SetChannelAttribute("Delay", ns.StringValue(o.accessDelay))
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", qsize)
    bn = ns.PointToPointHelper()
    bn.SetDeviceAttribute("DataRate", ns.StringValue(o.bnRate))
    bn.SetChannelAttribute("Delay", ns.StringValue(o.bnDelay))
    bn.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", qsize)
    bn_devs = bn.Install(routers.Get(0), routers.Get(1))
    dev0 = bn_devs.Get(0).GetObject[ns.PointToPointNetDevice]()
    dev0.GetQueue().SetMaxSize(ns.QueueSize("1p"))
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.252"))
    bn_if = addr.Assign(bn_devs)

    s_addr = ns.Ipv4AddressHelper(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.255.252"))
    r_addr = ns.Ipv4AddressHelper(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.252"))
    s_if, r_if = [], []
    acc = ns.NetDeviceContainer()
    for i in range(n):
        s = access.Install(senders.Get(i), routers.Get(0))
        r = access.Install(routers.Get(1), receivers.Get(i))
        s_if.append(s_addr.Assign(s))
        s_addr.NewNetwork()
        r_if.append(r_addr.Assign(r))
        r_addr.NewNetwork()
        acc.Add(s)
        acc.Add(r)
    none = ns.TrafficControlHelper()
    none.Uninstall(acc)
    none.Uninstall(bn_devs)
    tch = ns.TrafficControlHelper()
    kind = {"red": "ns3::RedQueueDisc", "fifo": "ns3::FifoQueueDisc"}[o.queue]
    tch.SetRootQueueDisc(kind, "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{o.limit}p")))
    qdiscs = tch.Install(bn_devs.Get(0))

    srh = ns.Ipv4StaticRoutingHelper()
    left = srh.GetStaticRouting(routers.Get(0).GetObject[ns.Ipv4]())
    right = srh.GetStaticRouting(routers.Get(1).GetObject[ns.Ipv4]())
    mask16 = ns.Ipv4Mask("255.255.0.0")
    left.AddNetworkRouteTo(ns.Ipv4Address("10.2.0.0"), mask16, bn_if.GetAddress(1), 1)
    right.AddNetworkRouteTo(ns.Ipv4Address("10.1.0.0"), mask16, bn_if.GetAddress(0), 1)
    for i in range(n):
        srh.GetStaticRouting(senders.Get(i).GetObject[ns.Ipv4]()).SetDefaultRoute(s_if[i].GetAddress(1), 1)
        srh.GetStaticRouting(receivers.Get(i).GetObject[ns.Ipv4]()).SetDefaultRoute(r_if[i].GetAddress(0), 1)

    start_rv = ns.CreateObject[ns.UniformRandomVariable]()
    start_rv.SetStream(1)
    sinks = []
    port = 5000
    for i in range(n):
        is_udp = has_udp and i == o.tcp
        proto = "ns3::UdpSocketFactory" if is_udp else "ns3::TcpSocketFactory"
        dst = ns.InetSocketAddress(r_if[i].GetAddress(1), port).ConvertTo()
        any_addr = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        sa = ns.PacketSinkHelper(proto, any_addr).Install(receivers.Get(i))
        sa.Start(ns.Seconds(0))
        sinks.append(sa.Get(0).GetObject[ns.PacketSink]())
        if is_udp:
            h = ns.OnOffHelper(proto, dst)
            h.SetConstantRate(ns.DataRate(o.udpRate), udp_payload)
        else:
            h = ns.BulkSendHelper(proto, dst)
            h.SetAttribute("SendSize", ns.UintegerValue(seg))
            h.SetAttribute("MaxBytes", ns.UintegerValue(0))
        app = h.Install(senders.Get(i))
        app.Start(ns.Seconds(start_rv.GetValue(0.0, o.startSpread)))

    q = qdiscs.Get(0)
    ns.Simulator.Stop(ns.Seconds(o.warmup))
    ns.Simulator.Run()
    rx0 = [k.GetTotalRx() for k in sinks]
    deq0 = q.GetStats().nTotalDequeuedPackets
    ns.Simulator.Stop(ns.Seconds(o.duration - o.warmup))
    ns.Simulator.Run()
    rx1 = [k.GetTotalRx() for k in sinks]
    st = q.GetStats()
    events = ns.Simulator.GetEventCount()
    wall = time.perf_counter() - t0
    secs = o.duration - o.warmup
    tcp, udp = [], 0.0
    for i in range(n):
        is_udp = has_udp and i == o.tcp
        bps = (rx1[i] - rx0[i]) / (udp_payload if is_udp else seg) * o.pktSize * 8 / secs
        if is_udp:
            udp = bps
        else:
            tcp.append(bps)
    s1, s2 = sum(tcp), sum(x * x for x in tcp)
    print(
        json.dumps(
            {
                "simulator": "ns-3.44 (PyPI)",
                "wall_seconds": wall,
                "events": int(events),
                "sim_seconds": o.duration,
                "bottleneck_packets": int(st.nTotalDequeuedPackets - deq0),
                "bottleneck_packets_total": int(st.nTotalDequeuedPackets),
                "tcp_goodput_bps": s1,
                "udp_goodput_bps": udp,
                "jain": s1 * s1 / (len(tcp) * s2) if s2 > 0 else 1.0,
                "qdisc_drops": int(st.nTotalDroppedPackets),
                "flows": n,
            }
        )
    )
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
