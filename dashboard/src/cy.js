// Cytoscape with the fCoSE layout: loaded on demand, only by the graph view (a separate chunk).
import cytoscape from "cytoscape";
import fcose from "cytoscape-fcose";

cytoscape.use(fcose);

export default cytoscape;
